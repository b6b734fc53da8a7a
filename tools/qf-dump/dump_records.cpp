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
Json error_json(const FileError& e) {
    return {{"kind", error_kind_name(e.kind)},
            {"path", json_bytes(e.path)},
            {"offset", e.offset},
            {"expected", json_bytes(e.expected)},
            {"found", json_bytes(e.found)},
            {"message", json_bytes(e.message())}};
}

} // namespace

int dump_records(int fd, const std::string& path, const RecordOptions& o, std::ostream& out) {
    RecordWalker walker(fd, path, o.walk);
    WalkedRecord r;
    Segment segment = Segment::envelope;
    Json doc = {{"file", json_bytes(path)},
                {"follow_pointers", o.walk.follow_pointers},
                {"skip_content", o.walk.skip_content},
                {"records", Json::array()}};
    if (!o.json) {
        out << "# " << path << "\n"
            << "#    offset  T name                     length  payload\n";
    }
    while (walker.next(r)) {
        const char* name = record_type_name_in(r.type, r.segment);
        if (o.json) {
            const bool truncated = o.max_payload && r.payload.size() > o.max_payload;
            Json rec = {
                {"offset", r.offset},
                {"type", json_bytes(std::string(1, static_cast<char>(r.type)))},
                {"name", name},
                {"segment", segment_name(r.segment)},
                {"length", r.payload.size()},
                {"payload", json_bytes(truncated ? r.payload.substr(0, o.max_payload) : r.payload)},
                {"truncated", truncated},
                {"allowed", r.allowed}};
            if (r.pointer_target) rec["pointer_target"] = *r.pointer_target;
            doc["records"].push_back(std::move(rec));
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
                if (*r.pointer_target)
                    out << "  -> " << *r.pointer_target;
                else
                    out << "  (placeholder)";
            }
            out << "\n";
        }
    }
    const auto& failure = walker.failure();
    if (o.json) {
        doc["error"] = failure ? error_json(*failure) : Json(nullptr);
        print_json(out, doc);
    } else if (failure) {
        out << "# error: " << failure->message() << "\n";
    } else {
        out << "# end\n";
    }
    return failure ? 1 : 0;
}

} // namespace qfdump
