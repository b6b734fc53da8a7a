#include "chroot_env.hpp"

#include "error.hpp"

#include <cerrno>
#include <filesystem>
#include <glob.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace compat {
namespace {

namespace fs = std::filesystem;

// Copies one absolute path to the same place below `root`, if it exists.
void copy_into(const std::string& root, const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return;
    fs::path target = fs::path(root) / fs::path(path).relative_path();
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw Error("chroot: mkdir " + target.parent_path().string() + ": " + ec.message());
    fs::copy_file(path, target, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error("chroot: copy " + path + " to " + target.string() + ": " + ec.message());
    fs::permissions(target, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                    fs::perm_options::add, ec);
}

// A character device node below `root`, like the one on the host.
void copy_device(const std::string& root, const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return;
    std::string target = root + path;
    std::error_code ec;
    fs::create_directories(fs::path(target).parent_path(), ec);
    if (mknod(target.c_str(), S_IFCHR | 0666, st.st_rdev) != 0 && errno != EEXIST)
        throw sys_error("chroot: mknod " + target);
    chmod(target.c_str(), 0666);
}

} // namespace

void populate_chroot(const std::string& queue_dir) {
    for (const char* f : {"/etc/localtime", "/etc/services", "/etc/resolv.conf", "/etc/hosts",
                          "/etc/host.conf", "/etc/nsswitch.conf", "/etc/nss_mdns.config"})
        copy_into(queue_dir, f);
    for (const char* pattern :
         {"/lib/*/libgcc_s*.so*", "/lib/*/libnss*.so*", "/lib/*/libresolv*.so*",
          "/lib/libgcc_s*.so*", "/lib/libnss*.so*", "/lib/libresolv*.so*"}) {
        glob_t g{};
        if (glob(pattern, 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i)
                copy_into(queue_dir, g.gl_pathv[i]);
        globfree(&g);
    }
    copy_device(queue_dir, "/dev/random");
    copy_device(queue_dir, "/dev/urandom");
    // Daemons read the time zone through this name too.
    std::error_code ec;
    fs::create_directories(queue_dir + "/usr/lib/zoneinfo", ec);
    fs::create_symlink("/etc/localtime", queue_dir + "/usr/lib/zoneinfo/localtime", ec);
}

} // namespace compat
