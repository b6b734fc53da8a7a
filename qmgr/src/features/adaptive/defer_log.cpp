#include "defer_log.hpp"

#include <charconv>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {
// An `offset` value: its leading digits as a positive number, as the
// defer service's own reader takes it; 0 (no offset) when there are none,
// when it is 0, or when it does not fit in 64 bits, as no recipient sits
// at such an offset.
int64_t parse_offset(std::string_view value) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    (void)end;
    return ec == std::errc() && n > 0 ? n : 0;
}
} // namespace

std::vector<DeferRecord> parse_defer_records(std::string_view text) {
    std::vector<DeferRecord> out;
    DeferRecord rec;
    bool open = false; // attribute lines seen since the last blank line
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) break; // a line cut short: not complete
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.empty()) {
            if (open) out.push_back(std::move(rec));
            rec = DeferRecord{};
            open = false;
            continue;
        }
        size_t eq = line.find('=');
        if (line.front() == '<' || eq == std::string_view::npos) continue; // old-style line
        std::string_view name = line.substr(0, eq), value = line.substr(eq + 1);
        open = true;
        if (name == "offset") {
            rec.offset = parse_offset(value);
        } else if (name == "status") {
            rec.status = value;
        } else if (name == "reason") {
            rec.reason = value;
        }
    }
    return out;
}

int64_t file_size(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

std::string read_from(const std::string& path, int64_t from, size_t limit) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string out(limit, '\0');
    ssize_t n = ::pread(fd, out.data(), limit, from);
    ::close(fd);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
}

} // namespace cqmgr::qmgr
