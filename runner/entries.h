// Running the entries of a bundle through ExecuTorch's standard Module API
// and writing each one's result file (results/<id>.txt, and .bin outputs).
#pragma once

#include "manifest.h"

#include <string>

namespace conformance_runner {

// The marker of a step line on stderr (the host names the last one after a crash or a hang).
extern const char* const kStepMarker;

// Writes "<marker><what>" on its own line of stderr, unbuffered.
void step(const std::string& what);

// Runs `entry` of the bundle in `dir`; false with `error` only if its result cannot be written
// (a runtime error is a result, not a failure of the runner).
bool run_entry(const std::string& dir, const Entry& entry, std::string& error);

}  // namespace conformance_runner
