// Running the entries of a bundle through ExecuTorch's standard Module API
// and writing each one's result file (results/<id>.txt, and .bin outputs).
#pragma once

#include "manifest.h"

#include <string>

namespace conformance_runner {

// Opens `path` (results/steps.txt) for the step lines: a file of its own, so that nothing the backend
// logs can pass for a step (the host names the last one after a crash or a hang). False if it cannot.
bool open_steps(const std::string& path);

// Appends `what` as a line of the steps file, unbuffered (one write(2), so it survives a crash).
void step(const std::string& what);

// Runs `entry` of the bundle in `dir`; false with `error` only if its result cannot be written
// (a runtime error is a result, not a failure of the runner).
bool run_entry(const std::string& dir, const Entry& entry, std::string& error);

// The exit codes of running a bundle (main.cpp documents them).
constexpr int kOk = 0, kMalformedBundle = 65, kCannotWrite = 74;

// Reads BUNDLE_DIR/manifest.txt and runs each entry, writing BUNDLE_DIR/results/; kOk, or another exit
// code with `error` saying why.
int run_bundle(const std::string& dir, std::string& error);

}  // namespace conformance_runner
