// A message's primary header lines (see header_block.hpp).
#include "cqmgr/queuefile/header_block.hpp"

#include "cqmgr/queuefile/pointer.hpp"
#include "cqmgr/queuefile/record.hpp"

namespace cqmgr::queuefile {

namespace {
// True for "Name: value" (blanks allowed before the colon, as in RFC 822).
bool is_header(const std::string& line) {
    size_t i = 0;
    while (i < line.size() && line[i] > 32 && line[i] < 127 && line[i] != ':')
        ++i;
    if (i == 0) return false;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
        ++i;
    return i < line.size() && line[i] == ':';
}
} // namespace

std::vector<std::string> read_header_lines(int fd, int64_t data_offset, size_t max_bytes) {
    std::vector<std::string> out;
    if (data_offset <= 0) return out;
    RecordStream in(fd);
    if (!in.seek(static_cast<off_t>(data_offset))) return out;
    PointerFollower pointers;
    std::string payload, line, header;
    size_t read = 0;
    bool continued = false; // the last record was an 'L': the line goes on
    auto end_header = [&] {
        if (!header.empty()) out.push_back(std::move(header));
        header.clear();
    };
    for (;;) {
        int type = in.get(payload);
        if (type == rec::ptr) {
            FileError error;
            if (!pointers.follow(in, payload, in.record_start(), error)) break;
            continue;
        }
        if (type != rec::norm && type != rec::cont) break; // 'X', damage, end of file
        read += payload.size();
        line += payload;
        if (read > max_bytes) break;
        continued = type == rec::cont;
        if (continued) continue;
        if (line.empty()) break; // the blank line that ends the headers
        if (line[0] == ' ' || line[0] == '\t') {
            // A continuation line belongs to the header before it; before
            // any header it is the start of the body.
            if (header.empty()) break;
            header += "\n" + line;
        } else if (!is_header(line)) {
            break; // the body starts without a blank line
        } else {
            end_header();
            header = std::move(line);
        }
        line.clear();
    }
    end_header();
    return out;
}

} // namespace cqmgr::queuefile
