#include "dump_records.hpp"

#include "json.hpp"

#include <cstdio>

namespace qfdump {

using namespace cqmgr::queuefile;

namespace {

// The payload as shown: cut to `max` bytes unless max is 0.
std::string shown(const std::string& payload, size_t max) {
    return escape_bytes(payload, max ? max : payload.size() + 1);
}

// The typed error as a JSON object.
std::string error_json(const FileError& e) {
    return "{\"kind\":" + json_string(error_kind_name(e.kind)) + ",\"path\":" + json_string(e.path) +
           ",\"offset\":" + std::to_string(e.offset) + ",\"expected\":" + json_string(e.expected) +
           ",\"found\":" + json_string(e.found) + ",\"message\":" + json_string(e.message()) + "}";
}

} // namespace

int dump_records(int fd, const std::string& path, const RecordOptions& o, std::ostream& out) {
    RecordWalker walker(fd, path, o.walk);
    WalkedRecord r;
    Segment segment = Segment::envelope;
    bool first = true;
    if (o.json) {
        out << "{\"file\":" << json_string(path) << ",\"follow_pointers\":"
            << (o.walk.follow_pointers ? "true" : "false") << ",\"skip_content\":"
            << (o.walk.skip_content ? "true" : "false") << ",\"records\":[";
    } else {
        out << "# " << path << "\n"
            << "#    offset  T name                     length  payload\n";
    }
    while (walker.next(r)) {
        const char* name = record_type_name_in(r.type, r.segment);
        if (o.json) {
            out << (first ? "\n" : ",\n") << "{\"offset\":" << r.offset << ",\"type\":"
                << json_string(std::string(1, static_cast<char>(r.type))) << ",\"name\":"
                << json_string(name) << ",\"segment\":" << json_string(segment_name(r.segment))
                << ",\"length\":" << r.payload.size() << ",\"payload\":"
                << json_string(o.max_payload && r.payload.size() > o.max_payload
                                   ? r.payload.substr(0, o.max_payload)
                                   : r.payload)
                << ",\"truncated\":"
                << (o.max_payload && r.payload.size() > o.max_payload ? "true" : "false")
                << ",\"allowed\":" << (r.allowed ? "true" : "false");
            if (r.pointer_target) out << ",\"pointer_target\":" << *r.pointer_target;
            out << "}";
        } else {
            if (r.segment != segment) {
                segment = r.segment;
                out << "# -- " << segment_name(segment) << " segment --\n";
            }
            char head[96];
            std::string type = escape_bytes(std::string(1, static_cast<char>(r.type)));
            std::snprintf(head, sizeof head, "%11lld %c%-2s %-24s %6zu  ",
                          static_cast<long long>(r.offset), r.allowed ? ' ' : '!', type.c_str(),
                          name, r.payload.size());
            out << head << '"' << shown(r.payload, o.max_payload) << '"';
            if (r.pointer_target) {
                if (*r.pointer_target) out << "  -> " << *r.pointer_target;
                else out << "  (placeholder)";
            }
            out << "\n";
        }
        first = false;
    }
    const auto& failure = walker.failure();
    if (o.json) {
        out << "\n],\"error\":" << (failure ? error_json(*failure) : "null") << "}\n";
    } else if (failure) {
        out << "# error: " << failure->message() << "\n";
    } else {
        out << "# end\n";
    }
    return failure ? 1 : 0;
}

} // namespace qfdump
