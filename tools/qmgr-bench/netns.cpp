#include "netns.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

namespace bench {
namespace {

// SIOCSIFFLAGS IFF_UP on "lo"; "" on success.
std::string loopback_up() {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("socket: ") + std::strerror(errno);
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    std::string err;
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
        err = std::string("SIOCGIFFLAGS lo: ") + std::strerror(errno);
    } else {
        ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
            err = std::string("SIOCSIFFLAGS lo up: ") + std::strerror(errno);
    }
    close(fd);
    return err;
}

} // namespace

// unshare(CLONE_NEWNET) and loopback up; back to the old namespace if that fails.
std::string enter_private_network() {
    int old = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (old < 0) return std::string("open /proc/self/ns/net: ") + std::strerror(errno);
    if (unshare(CLONE_NEWNET) != 0) {
        std::string err = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
        close(old);
        return err;
    }
    std::string err = loopback_up();
    if (!err.empty() && setns(old, CLONE_NEWNET) != 0)
        err += std::string("; and setns back failed: ") + std::strerror(errno);
    close(old);
    return err;
}

// unshare(CLONE_NEWNS), every mount private (so that nothing done here
// reaches the original namespace), then the bind mount.
std::string use_private_resolver(const std::string& resolv_conf) {
    if (unshare(CLONE_NEWNS) != 0)
        return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return std::string("mount --make-rprivate /: ") + std::strerror(errno);
    if (mount(resolv_conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0)
        return "mount --bind " + resolv_conf + " /etc/resolv.conf: " + std::strerror(errno);
    return "";
}

} // namespace bench
