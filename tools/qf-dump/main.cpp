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

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv) {
    qfdump::RecordOptions ro;
    ro.walk.skip_content = false;
    bool envelope = false, raw = false, full = false;
    int batch = 5000;
    std::vector<std::string> files;
    CLI::App app{"qf-dump: print a Postfix queue file record by record, or as the queue manager "
                 "reads it"};
    app.add_flag("--json", ro.json, "one JSON object per file (bytes as \\u00XX code points)");
    app.add_flag("--raw", raw, "do not follow pointers: read linearly to the end of the file");
    app.add_flag("--skip-content", ro.walk.skip_content,
                 "jump over the message content like postcat -e and qmgr");
    app.add_flag("--full", full, "show whole payloads (default: the first 400 bytes)");
    app.add_flag("--envelope", envelope, "what read_envelope() parsed, field by field");
    app.add_option("--batch", batch, "recipients per batch in --envelope mode (default 5000)")
        ->check(CLI::Range(1, 1000000));
    app.add_option("FILE", files, "queue files")->required();
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2; // usage error, as documented above
    }
    if (raw) ro.walk.follow_pointers = false;
    if (full) ro.max_payload = 0;
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
