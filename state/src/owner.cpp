#include "cqmgr/state/owner.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::state {

namespace {

bool is_root() {
    return ::geteuid() == 0;
}

// The directory part of `path` ("." for a bare name).
std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

AsOwner::AsOwner(const std::optional<Owner>& owner) {
    if (!owner || !is_root() || owner->uid == 0) return;
    int n = ::getgroups(0, nullptr);
    if (n < 0) {
        ok_ = false;
        return;
    }
    saved_groups_.resize(static_cast<size_t>(n));
    if (n > 0 && ::getgroups(n, saved_groups_.data()) < 0) {
        ok_ = false;
        return;
    }
    saved_egid_ = ::getegid();
    if (::setgroups(1, &owner->gid) < 0) {
        ok_ = false;
        return;
    }
    switched_ = true;
    if (::setegid(owner->gid) < 0 || ::seteuid(owner->uid) < 0) ok_ = false;
}

AsOwner::~AsOwner() {
    if (!switched_) return;
    int saved_errno = errno;
    // Root's real and saved ids are still 0: taking them back cannot fail,
    // and a process that did not get them back must not go on as if.
    if (::seteuid(0) < 0 || ::setegid(saved_egid_) < 0 ||
        ::setgroups(saved_groups_.size(), saved_groups_.data()) < 0) {
        std::fputs("cqmgr: panic: cannot take back root's ids after acting as mail_owner\n",
                   stderr);
        std::abort();
    }
    errno = saved_errno;
}

bool drop_to(const std::optional<Owner>& owner) {
    if (!owner || !is_root() || owner->uid == 0) return true;
    return ::setgroups(1, &owner->gid) == 0 && ::setgid(owner->gid) == 0 &&
           ::setuid(owner->uid) == 0;
}

uid_t file_owner(const std::optional<Owner>& owner) {
    return owner && is_root() ? owner->uid : ::geteuid();
}

int open_no_link(const std::string& path, const std::optional<Owner>& owner, int flags) {
    int dir;
    {
        AsOwner as(owner);
        if (!as.ok()) return -1;
        dir = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (dir < 0) return -1;
    struct stat st;
    if (::fstat(dir, &st) < 0 || st.st_uid != file_owner(owner)) {
        ::close(dir);
        errno = EPERM;
        return -1;
    }
    int fd = ::openat(dir, base_of(path).c_str(),
                      flags | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    int saved_errno = errno;
    ::close(dir);
    errno = saved_errno;
    return fd;
}

std::string unusable_file(const std::string& path, const std::optional<Owner>& owner) {
    struct stat st;
    if (::lstat(path.c_str(), &st) < 0) return {};
    if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
    if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
    if (st.st_nlink != 1) return path + " has " + std::to_string(st.st_nlink) + " hard links";
    uid_t want = file_owner(owner);
    if (st.st_uid != want)
        return path + " belongs to uid " + std::to_string(st.st_uid) + ", not " +
               std::to_string(want);
    return {};
}

} // namespace cqmgr::state
