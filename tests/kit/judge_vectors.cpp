// Runs backend_kit::judge_blob on blobs read from stdin, one hex blob per
// line, and prints per blob: verdict TAB message TAB header fields. The
// runtime it judges for is given on the command line:
//   judge_vectors ID DISTRIBUTION BACKEND_VERSION EXECUTORCH_VERSION MAJOR MINOR_MIN MINOR SINCE
// Only the C++ standard library and <backend_kit/header.h>.
#include <backend_kit/header.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

backend_kit::Version parse_version(const char* text) {
  unsigned a = 0, b = 0, c = 0;
  std::sscanf(text, "%u.%u.%u", &a, &b, &c);
  return {static_cast<uint16_t>(a), static_cast<uint16_t>(b), static_cast<uint16_t>(c)};
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: %s ID DISTRIBUTION BACKEND_VERSION EXECUTORCH_VERSION MAJOR MINOR_MIN MINOR SINCE\n",
                 argv[0]);
    return 2;
  }
  const backend_kit::RuntimeVersions rt = {argv[1],
                                           argv[2],
                                           parse_version(argv[3]),
                                           parse_version(argv[4]),
                                           static_cast<uint16_t>(std::stoul(argv[5])),
                                           static_cast<uint16_t>(std::stoul(argv[6])),
                                           static_cast<uint16_t>(std::stoul(argv[7])),
                                           parse_version(argv[8])};
  std::string line;
  while (std::getline(std::cin, line)) {
    const std::vector<uint8_t> blob = from_hex(line);
    const backend_kit::Judgement j = backend_kit::judge_blob(blob.data(), blob.size(), rt);
    const backend_kit::Header& h = j.header;
    std::cout << backend_kit::verdict_name(j.verdict) << '\t' << j.message << '\t';
    if (!h.backend_id.empty()) {
      std::cout << backend_kit::format(
          "%u %u %u.%u %s %s %llu %u %s", h.header_length, h.header_format_version, h.blob_format_major,
          h.blob_format_minor, backend_kit::version_string(h.backend_version).c_str(),
          backend_kit::version_string(h.executorch_version).c_str(),
          static_cast<unsigned long long>(h.payload_size), h.checksum, h.backend_id.c_str());
    }
    std::cout << '\n';
  }
  return 0;
}
