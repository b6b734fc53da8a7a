// libFuzzer target for reading a message's primary header lines
// (queuefile::read_header_lines), which cqmgr_priority_header_maps matches:
// the header text is the sender's.  The input is a queue file; the
// content starts where its envelope says, or, when it has none that reads,
// at an offset taken from its first byte.  Besides the sanitizers it checks:
//   * no more content is returned than the byte limit allows (with the
//     newlines that join a header's lines);
//   * each logical line starts with a header name and a colon (a record
//     may hold a newline of its own, so what follows one is not checked).
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/header_block.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace cqmgr::queuefile;

namespace {
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

// A header line starts with a name: not a blank, not a colon, and a colon
// comes before the first newline.
bool starts_with_header_name(const std::string& line) {
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == ':') return false;
    const size_t colon = line.find(':');
    return colon != std::string::npos && colon < line.find('\n');
}

void check(const std::vector<std::string>& lines, size_t max_bytes) {
    size_t content = 0;
    for (const auto& line : lines) {
        if (!starts_with_header_name(line)) finding("a line that is not a header");
        content += line.size();
    }
    // Every line but the first of a header adds its joining newline.
    if (content > max_bytes + content / 2) finding("more content than the limit");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static int fd = ::memfd_create("qf", 0);
    if (fd < 0) std::abort();
    if (::ftruncate(fd, 0) != 0) std::abort();
    if (size && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();

    int64_t offset = size ? 1 + data[0] % 64 : 1;
    Envelope env;
    if (auto r = read_envelope(fd, env, 1000, "fuzz"); r.ok && env.data_offset > 0)
        offset = env.data_offset;
    // A small limit cuts the block in the middle; the daemon's is 64 KiB.
    for (size_t max_bytes : {size_t(16), size_t(64 * 1024)})
        check(read_header_lines(fd, offset, max_bytes), max_bytes);
    return 0;
}
