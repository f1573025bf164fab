/*
 * The C entry points used by Python (through ctypes) and by tests: what this
 * build is, and the verdict on a blob, computed by the same code as init().
 */
#include <reference_backend/reference_backend.h>
#include <reference_backend/versions.h>

#include <cstdio>
#include <string>

namespace {

using backend_kit::version_string;

}  // namespace

extern "C" const char* reference_backend_runtime_info(void) {
  using namespace reference_backend;
  static const std::string info = [] {
    const RuntimeVersions& rt = runtime_versions();
    return std::string("backend_id=") + rt.backend_id + "\ndistribution=" + rt.distribution +
           "\nbackend_version=" + version_string(rt.backend_version) +
           "\nexecutorch_version=" + version_string(rt.executorch_version) +
           "\nheader_format_version=" + std::to_string(backend_kit::kHeaderFormatVersion) +
           "\nblob_format_major=" + std::to_string(rt.blob_format_major) +
           "\nblob_format_minor_min=" + std::to_string(rt.blob_format_minor_min) +
           "\nblob_format_minor=" + std::to_string(rt.blob_format_minor) +
           "\ncurrent_format_since=" + version_string(rt.current_format_since);
  }();
  return info.c_str();
}

extern "C" int reference_backend_judge_blob(const uint8_t* blob, size_t size, char* report, size_t capacity) {
  using namespace reference_backend;
  Judgement j = judge_blob(blob, size, runtime_versions());
  std::string text = std::string("verdict=") + verdict_name(j.verdict) + "\nmessage=" + j.message;
  if (j.verdict != Verdict::kInvalid) {
    const backend_kit::Header& h = j.header;
    text += "\nheader_length=" + std::to_string(h.header_length) +
            "\nheader_format_version=" + std::to_string(h.header_format_version);
    if (j.verdict != Verdict::kIncompatible || !h.backend_id.empty()) {
      text += "\nblob_format=" + std::to_string(h.blob_format_major) + "." +
              std::to_string(h.blob_format_minor) + "\nbackend_version=" + version_string(h.backend_version) +
              "\nexecutorch_version=" + version_string(h.executorch_version) +
              "\npayload_size=" + std::to_string(h.payload_size) +
              "\nchecksum=" + std::to_string(h.checksum) + "\nbackend_id=" + h.backend_id;
    }
  }
  if (report != nullptr && capacity > 0) {
    std::snprintf(report, capacity, "%s", text.c_str());
  }
  return static_cast<int>(j.verdict);
}
