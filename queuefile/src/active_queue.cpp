#include "cqmgr/queuefile/active_queue.hpp"

#include "cqmgr/queuefile/update.hpp"

#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

namespace cqmgr::queuefile {

namespace {
// The failure of the last system call, described as "`what`: <errno text>".
StoreError sys_error(std::string what, int err = errno) {
    return StoreError{err, std::move(what) + ": " + std::strerror(err)};
}

// A record update's failure in the store's terms.
StoreResult from_update(const std::optional<FileError>& e) {
    if (!e) return std::nullopt;
    return StoreError{e->sys_errno, e->message()};
}
} // namespace

ActiveQueue::ActiveQueue(QueueLayout layout, bool dont_remove)
    : layout_(std::move(layout)), dont_remove_(dont_remove) {}

ActiveQueue::Readiness ActiveQueue::check(std::string_view queue, std::string_view id) const {
    Readiness r;
    const std::string& p = scratch_path(queue, id);
    // statx() rather than lstat(): the same one look, which also gives the
    // file's birth time where the file system keeps one.
    struct statx st;
    if (::statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) <
        0) {
        if (errno != ENOENT) r.warning = p + ": " + std::strerror(errno);
        return r;
    }
    if (!S_ISREG(st.stx_mode)) {
        r.warning = p + ": uid " + std::to_string(st.stx_uid) + ": not a regular file";
        return r;
    }
    r.mode = st.stx_mode;
    r.mtime = st.stx_mtime.tv_sec;
    if (st.stx_mask & STATX_BTIME) r.born = st.stx_btime.tv_sec;
    r.ready = (st.stx_mode & S_IRWXU) == qmode::ready;
    return r;
}

std::vector<std::string> ActiveQueue::leftovers() const {
    return scan_queue("active");
}

StoreResult ActiveQueue::recover(std::string_view id, int64_t when) const {
    if (auto e = set_time("active", id, when, "qmgr_move")) return e;
    return move("active", "incoming", id, "qmgr_move");
}

ActiveQueue::Claim ActiveQueue::claim(std::string_view from, std::string_view id) const {
    Claim c;
    // A file left in active by a previous queue manager is taken in place.
    int err = from == "active" ? 0 : layout_.move(from, "active", id);
    if (err) {
        c.step = Claim::Step::move;
        c.error = sys_error("qmgr_active_feed: " + std::string(id) + ": rename from " +
                                std::string(from) + " to active",
                            err);
        return c;
    }
    const std::string& p = scratch_path("active", id);
    int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        c.step = Claim::Step::open;
        c.error = sys_error("open active " + std::string(id));
        return c;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) < 0) {
        c.step = Claim::Step::lock;
        c.error = sys_error("lock " + p);
        ::close(fd);
        return c;
    }
    c.fd = fd;
    return c;
}

StoreResult ActiveQueue::clear_mode(int fd, std::string_view id, mode_t mode, mode_t clear) const {
    if (::fchmod(fd, mode & 07777 & ~clear) < 0) return sys_error("fchmod " + path("active", id));
    return std::nullopt;
}

ReadResult ActiveQueue::read(std::string_view id, Envelope& env, int limit, int fd) const {
    const std::string& p = scratch_path("active", id);
    bool own = fd < 0;
    if (own && (fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
        ReadResult r;
        r.open_errno = errno;
        r.error = "open active " + std::string(id) + ": " + std::strerror(errno);
        return r;
    }
    ReadResult r = read_envelope(fd, env, limit, p);
    if (own) ::close(fd);
    return r;
}

StoreResult ActiveQueue::mark_done(std::string_view id, int64_t offset) const {
    return from_update(mark_recipient_done(scratch_path("active", id), offset));
}

StoreResult ActiveQueue::rewrite_warn_time(std::string_view id, int64_t offset) const {
    return from_update(queuefile::rewrite_warn_time(scratch_path("active", id), offset));
}

StoreResult ActiveQueue::kill_record(std::string_view id, int64_t offset) const {
    return from_update(queuefile::kill_record(scratch_path("active", id), offset));
}

StoreResult ActiveQueue::defer_until(std::string_view id, int64_t when) const {
    if (auto e = set_time("active", id, when, "qmgr_active_defer")) return e;
    return move("active", "deferred", id, "qmgr_active_defer");
}

StoreResult ActiveQueue::postpone(std::string_view id, int64_t when) const {
    return set_time("deferred", id, when, "qmgr_dead_backlog");
}

StoreResult ActiveQueue::release(std::string_view id, int64_t when) const {
    if (auto e = set_time("active", id, when, "qmgr_active_defer")) return e;
    return move("active", "incoming", id, "qmgr_active_defer");
}

StoreResult ActiveQueue::quarantine(std::string_view id) const {
    if (int err = layout_.move("active", "corrupt", id))
        return sys_error(
            "qmgr_active_corrupt: save corrupt file queue active id " + std::string(id), err);
    return std::nullopt;
}

StoreResult ActiveQueue::remove(std::string_view id) const {
    const std::string& p = scratch_path("active", id);
    int rc = 0;
    if (!dont_remove_) {
        rc = ::unlink(p.c_str());
    } else {
        // dont_remove: keep it in saved/, adding '+' until the name is free.
        std::string target = "saved/" + std::string(id);
        struct stat st;
        while (::lstat(target.c_str(), &st) == 0)
            target += '+';
        rc = ::rename(p.c_str(), target.c_str());
    }
    if (rc < 0)
        return sys_error("qmgr_active_done_3_generic: remove " + std::string(id) + " from active");
    return std::nullopt;
}

bool ActiveQueue::intact(std::string_view id) const {
    return check("active", id).ready;
}

ActiveQueue::LogState ActiveQueue::log_state(std::string_view log_queue,
                                             std::string_view id) const {
    struct stat st;
    if (::stat(scratch_path(log_queue, id).c_str(), &st) < 0) return LogState::absent;
    return st.st_size == 0 ? LogState::empty : LogState::present;
}

StoreResult ActiveQueue::remove_log(std::string_view log_queue, std::string_view id) const {
    if (::unlink(scratch_path(log_queue, id).c_str()) < 0) {
        if (errno == ENOENT) return StoreError{ENOENT, {}};
        return sys_error("remove " + std::string(log_queue) + " " + std::string(id));
    }
    return std::nullopt;
}

StoreResult ActiveQueue::set_time(std::string_view queue, std::string_view id, int64_t when,
                                  std::string_view who) const {
    const std::string& p = scratch_path(queue, id);
    utimbuf tb{static_cast<time_t>(when), static_cast<time_t>(when)};
    if (::utime(p.c_str(), &tb) < 0)
        return sys_error(std::string(who) + ": update " + p + " time stamps");
    return std::nullopt;
}

StoreResult ActiveQueue::move(std::string_view from, std::string_view to, std::string_view id,
                              std::string_view who) const {
    if (int err = layout_.move(from, to, id))
        return sys_error(std::string(who) + ": rename " + std::string(id) + " from " +
                             std::string(from) + " to " + std::string(to),
                         err);
    return std::nullopt;
}

} // namespace cqmgr::queuefile
