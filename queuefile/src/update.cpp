#include "cqmgr/queuefile/update.hpp"

#include "cqmgr/queuefile/record.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace cqmgr::queuefile {

namespace {

// An io error for `what` at `offset`, with errno's text.
FileError io_error(std::string_view path, int64_t offset, std::string what, int err) {
    return FileError{ErrorKind::io,   std::string(path),  offset,
                     std::move(what), std::strerror(err), err};
}

// Reads up to `n` bytes at `offset` (fewer at end of file).
std::optional<FileError> read_at(int fd, int64_t offset, size_t n, std::string& out,
                                 std::string_view path) {
    out.assign(n, '\0');
    size_t got = 0;
    while (got < n) {
        ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return io_error(path, offset, "a readable record", errno);
        if (r == 0) break;
        got += static_cast<size_t>(r);
    }
    out.resize(got);
    return std::nullopt;
}

// Seeks and writes `bytes` with one write(2) (retried only if cut short).
std::optional<FileError> write_at(int fd, int64_t offset, std::string_view bytes,
                                  std::string_view path) {
    if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0)
        return io_error(path, offset, "a seekable file", errno);
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return io_error(path, offset, "a writable file", errno);
        done += static_cast<size_t>(w);
    }
    return std::nullopt;
}

// Describes what was found at an offset for a wrong_record error.
std::string found_text(const std::string& head) {
    if (head.empty()) return "end of file";
    return "record type '" + escape_bytes(head.substr(0, 1)) + "'";
}

// Checks that `offset` is a valid record position at all.
std::optional<FileError> check_offset(int64_t offset, std::string_view path) {
    if (offset <= 0)
        return FileError{ErrorKind::bad_argument, std::string(path), offset,
                         "a record offset greater than 0", "offset " + std::to_string(offset)};
    return std::nullopt;
}

// Overwrites the type byte at `offset` with `to` when it is `from`; leaves a
// `to` that is already there alone.
std::optional<FileError> retype(int fd, int64_t offset, char from, char to, const char* what,
                                std::string_view path) {
    if (auto e = check_offset(offset, path)) return e;
    std::string head;
    if (auto e = read_at(fd, offset, 1, head, path)) return e;
    if (head == std::string(1, to)) return std::nullopt;
    if (head != std::string(1, from))
        return FileError{ErrorKind::wrong_record, std::string(path), offset, what,
                         found_text(head)};
    return write_at(fd, offset, std::string_view(&to, 1), path);
}

// Opens `path` read-write, runs `f` on it, closes it.
template <class F>
std::optional<FileError> with_file(const std::string& path, int64_t offset, F f) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return io_error(path, offset, "a queue file that can be opened read-write", errno);
    auto result = f(fd);
    if (::close(fd) < 0 && !result) result = io_error(path, offset, "a clean close", errno);
    return result;
}

} // namespace

std::optional<FileError> mark_recipient_done(int fd, int64_t offset, std::string_view path) {
    return retype(fd, offset, 'R', 'D', "a recipient record 'R'", path);
}

std::optional<FileError> kill_record(int fd, int64_t offset, std::string_view path) {
    return retype(fd, offset, 'A', 'K', "a named attribute record 'A'", path);
}

std::optional<FileError> rewrite_warn_time(int fd, int64_t offset, int64_t when,
                                           std::string_view path) {
    if (auto e = check_offset(offset, path)) return e;
    char payload[32];
    int n = std::snprintf(payload, sizeof payload, "%15lld", static_cast<long long>(when));
    if (n != static_cast<int>(fixed_number_width))
        return FileError{ErrorKind::bad_argument, std::string(path), offset,
                         "a warning time that fits in 15 characters", payload};
    std::string head;
    if (auto e = read_at(fd, offset, 2, head, path)) return e;
    if (head.size() < 2 || head[0] != 'W' || head[1] != static_cast<char>(fixed_number_width))
        return FileError{ErrorKind::wrong_record, std::string(path), offset,
                         "a warning time record 'W' with a 15-byte payload",
                         head.size() < 2 || head[0] != 'W'
                             ? found_text(head)
                             : "payload length byte " +
                                   std::to_string(static_cast<unsigned char>(head[1]))};
    return write_at(fd, offset, encode_record('W', std::string_view(payload, fixed_number_width)),
                    path);
}

std::optional<FileError> mark_recipient_done(const std::string& path, int64_t offset) {
    return with_file(path, offset, [&](int fd) { return mark_recipient_done(fd, offset, path); });
}

std::optional<FileError> rewrite_warn_time(const std::string& path, int64_t offset, int64_t when) {
    return with_file(path, offset,
                     [&](int fd) { return rewrite_warn_time(fd, offset, when, path); });
}

std::optional<FileError> kill_record(const std::string& path, int64_t offset) {
    return with_file(path, offset, [&](int fd) { return kill_record(fd, offset, path); });
}

} // namespace cqmgr::queuefile
