#include "admin_state.hpp"

#include "log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {

using json = nlohmann::json;

constexpr int format_version = 1;
// A file larger than this is not ours.
constexpr size_t max_file_size = 4 << 20;
constexpr std::string_view temp_suffix = ".tmp";

// The target's fields: a bare destination has no "transport", a whole
// transport no "destination".
json target_json(const core::AdminTarget& t) {
    json j = json::object();
    if (!t.transport.empty()) j["transport"] = t.transport;
    if (!t.queue.empty()) j["destination"] = t.queue;
    return j;
}

json until_json(int64_t until) {
    return until == 0 ? json(nullptr) : json(until);
}

// Reads one record's target; throws when it names nothing.
core::AdminTarget target_of(const json& j) {
    core::AdminTarget t;
    if (j.contains("transport")) t.transport = j.at("transport").get<std::string>();
    if (j.contains("destination")) t.queue = j.at("destination").get<std::string>();
    if (t.transport.empty() && t.queue.empty())
        throw std::invalid_argument("record without target");
    return t;
}

int64_t until_of(const json& j) {
    const json& u = j.at("until");
    if (u.is_null()) return 0;
    int64_t v = u.get<int64_t>();
    if (v <= 0) throw std::invalid_argument("bad until");
    return v;
}

std::string errno_text() {
    return std::strerror(errno);
}

// Writes all of `data` to `fd`.
bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

} // namespace

std::vector<AdminRecord> admin_records(const std::map<core::AdminTarget, core::AdminHold>& holds,
                                       const std::map<core::AdminTarget, core::AdminCap>& caps) {
    std::vector<AdminRecord> out;
    for (const auto& [target, hold] : holds)
        out.push_back(AdminRecord{core::AdminKind::hold, target, hold, {}});
    for (const auto& [target, cap] : caps)
        out.push_back(AdminRecord{core::AdminKind::cap, target, {}, cap});
    return out;
}

std::string encode_admin_records(const std::vector<AdminRecord>& records) {
    json suspend = json::array(), throttle = json::array();
    for (const AdminRecord& r : records) {
        json j = target_json(r.target);
        if (r.kind == core::AdminKind::hold) {
            j["until"] = until_json(r.hold.until);
            j["reason"] = r.hold.reason;
            j["uid"] = r.hold.uid;
            suspend.push_back(std::move(j));
        } else {
            j["concurrency"] = r.cap.concurrency;
            j["until"] = until_json(r.cap.until);
            j["uid"] = r.cap.uid;
            throttle.push_back(std::move(j));
        }
    }
    json doc{{"version", format_version}, {"suspend", suspend}, {"throttle", throttle}};
    return doc.dump() + "\n";
}

std::optional<std::vector<AdminRecord>> decode_admin_records(std::string_view text,
                                                             std::string& error) {
    std::vector<AdminRecord> out;
    try {
        json doc = json::parse(text);
        if (doc.at("version").get<int>() != format_version)
            throw std::invalid_argument("unknown version");
        for (const json& j : doc.at("suspend")) {
            AdminRecord r{core::AdminKind::hold, target_of(j), {}, {}};
            r.hold.until = until_of(j);
            r.hold.reason = j.at("reason").get<std::string>();
            r.hold.uid = j.at("uid").get<int64_t>();
            out.push_back(std::move(r));
        }
        for (const json& j : doc.at("throttle")) {
            AdminRecord r{core::AdminKind::cap, target_of(j), {}, {}};
            if (r.target.queue.empty()) throw std::invalid_argument("throttle without destination");
            r.cap.concurrency = j.at("concurrency").get<int>();
            if (r.cap.concurrency < 1) throw std::invalid_argument("concurrency below 1");
            r.cap.until = until_of(j);
            r.cap.uid = j.at("uid").get<int64_t>();
            out.push_back(std::move(r));
        }
    } catch (const std::exception& e) {
        // nlohmann's exceptions and ours alike.
        error = e.what();
        return std::nullopt;
    }
    return out;
}

AdminState::AdminState(int dir_fd, std::string dir_name)
    : fd_(dir_fd), dir_name_(std::move(dir_name)) {}

AdminState::~AdminState() {
    if (fd_ >= 0) ::close(fd_);
}

int AdminState::open_directory(const std::string& path) {
    return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

std::string AdminState::path() const {
    return dir_name_ + "/" + std::string(file_name);
}

std::vector<AdminRecord> AdminState::load() const {
    if (fd_ < 0) return {};
    int fd = ::openat(fd_, std::string(file_name).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno != ENOENT) log::warn("control: open " + path() + ": " + errno_text());
        return {};
    }
    std::string text;
    char buf[8192];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() <= max_file_size)
        text.append(buf, static_cast<size_t>(n));
    int read_errno = errno;
    ::close(fd);
    if (n < 0) {
        log::warn("control: read " + path() + ": " + std::strerror(read_errno));
        return {};
    }
    std::string error = text.size() > max_file_size ? "file too large" : "";
    std::optional<std::vector<AdminRecord>> records;
    if (error.empty()) records = decode_admin_records(text, error);
    if (!records) {
        log::warn("control: ignoring corrupt " + path() + ": " + error);
        return {};
    }
    return *records;
}

bool AdminState::save(const std::vector<AdminRecord>& records) const {
    if (fd_ < 0) {
        log::warn("control: cannot keep settings: data_directory " + dir_name_ +
                  " could not be opened");
        return false;
    }
    const std::string name(file_name);
    const std::string temp = name + std::string(temp_suffix);
    auto fail = [&](const std::string& what) {
        log::warn("control: " + what + " " + dir_name_ + "/" + temp + ": " + errno_text());
        ::unlinkat(fd_, temp.c_str(), 0);
        return false;
    };
    int fd =
        ::openat(fd_, temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail("create");
    bool written = write_all(fd, encode_admin_records(records)) && ::fsync(fd) == 0;
    int write_errno = errno;
    if (::close(fd) < 0 && written) return fail("close");
    if (!written) {
        errno = write_errno;
        return fail("write");
    }
    if (::renameat(fd_, temp.c_str(), fd_, name.c_str()) < 0) return fail("rename");
    // The rename itself reaches the disk with the directory.
    ::fsync(fd_);
    return true;
}

} // namespace cqmgr::qmgr
