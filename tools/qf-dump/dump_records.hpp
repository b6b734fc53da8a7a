// qf-dump's record mode: every record of a queue file in file order, with
// its offset, type letter and name, payload length and escaped payload.
#pragma once

#include "cqmgr/queuefile/record_walker.hpp"

#include <cstddef>
#include <ostream>
#include <string>

namespace qfdump {

struct RecordOptions {
    cqmgr::queuefile::WalkOptions walk;
    bool json = false;
    size_t max_payload = 400; // bytes of payload shown (0: all)
};

// Dumps the file open on `fd`; returns 0, or 1 when the file is damaged
// (the typed error is printed as the last item).
int dump_records(int fd, const std::string& path, const RecordOptions& o, std::ostream& out);

} // namespace qfdump
