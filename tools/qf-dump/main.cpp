// qf-dump — print a Postfix queue file record by record, or as the queue
// manager reads it.  For administrators and for debugging cqmgr.
//
// Usage: qf-dump [--json] [--raw] [--skip-content] [--full] FILE...
//        qf-dump --envelope [--batch N] [--json] FILE...
//   (default)       every record in file order: offset, type letter, name,
//                   payload length, payload with C escapes; pointers are
//                   shown and followed ("-> target"); "!" after the offset
//                   marks a record type that does not belong in its segment
//   --raw           do not follow pointers: read linearly to the end of the
//                   file, past the end record (shows the heap)
//   --skip-content  jump over the message content like postcat -e and qmgr
//   --full          show whole payloads (default: the first 400 bytes)
//   --json          one JSON object per file (bytes as \u00XX code points)
//   --envelope      what read_envelope() parsed: every field, each recipient
//                   with its offset, the batches, warnings and errors
//   --batch N       recipients per batch in --envelope mode (default 5000)
// Exit status: 0 all files read cleanly, 1 a file is damaged, 2 usage or
// open error.
#include "dump_envelope.hpp"
#include "dump_records.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {
// Prints the usage text and returns 2.
int usage() {
    std::cerr << "usage: qf-dump [--json] [--raw] [--skip-content] [--full] FILE...\n"
                 "       qf-dump --envelope [--batch N] [--json] FILE...\n";
    return 2;
}
} // namespace

int main(int argc, char** argv) {
    qfdump::RecordOptions ro;
    ro.walk.skip_content = false;
    bool envelope = false;
    int batch = 5000;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json") ro.json = true;
        else if (a == "--raw") ro.walk.follow_pointers = false;
        else if (a == "--skip-content") ro.walk.skip_content = true;
        else if (a == "--full") ro.max_payload = 0;
        else if (a == "--envelope") envelope = true;
        else if (a == "--batch" && i + 1 < argc) {
            char* end = nullptr;
            long n = std::strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1000000) return usage();
            batch = static_cast<int>(n);
        } else if (a == "--help" || a == "-h") {
            usage();
            return 0;
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            return usage();
        } else {
            files.push_back(a);
        }
    }
    if (files.empty()) return usage();
    int status = 0;
    for (const auto& f : files) {
        int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            std::cerr << "qf-dump: open " << f << ": " << std::strerror(errno) << "\n";
            status = 2;
            continue;
        }
        int rc = envelope ? qfdump::dump_envelope(fd, f, batch, ro.json, std::cout)
                          : qfdump::dump_records(fd, f, ro, std::cout);
        ::close(fd);
        if (rc && !status) status = rc;
    }
    return status;
}
