#include "jail.hpp"

#include "log.hpp"

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {
// The text of the current errno, as %m prints it.
std::string errno_text() {
    return std::strerror(errno);
}
} // namespace

void enter_jail(const std::string& root_dir, const std::string& user) {
    uid_t uid = 0;
    if (!user.empty()) {
        // Looked up before the chroot: the jail need not hold /etc/passwd.
        passwd* pw = ::getpwnam(user.c_str());
        if (!pw) log::fatal("unknown user: " + user);
        uid = pw->pw_uid;
        gid_t gid = pw->pw_gid;
        if (::setgid(gid) < 0) log::fatal("setgid(" + std::to_string(gid) + "): " + errno_text());
        if (::initgroups(user.c_str(), gid) < 0) log::fatal("initgroups: " + errno_text());
    }
    if (!root_dir.empty()) {
        if (::chroot(root_dir.c_str()) < 0) log::fatal("chroot(" + root_dir + "): " + errno_text());
        if (::chdir("/") < 0) log::fatal("chdir(/): " + errno_text());
    }
    if (!user.empty() && ::setuid(uid) < 0)
        log::fatal("setuid(" + std::to_string(uid) + "): " + errno_text());
}

} // namespace cqmgr::qmgr
