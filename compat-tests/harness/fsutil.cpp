#include "fsutil.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <pwd.h>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace compat {

// Reads a file completely or throws.
std::string read_file(const std::string& path) {
    std::string out;
    if (!read_file_if_exists(path, out))
        throw Error("expected file " + path + " to exist, found none");
    return out;
}

// Reads a file completely; false if it does not exist, throws on other errors.
bool read_file_if_exists(const std::string& path, std::string& out) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return false;
        throw sys_error("open " + path);
    }
    out.clear();
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int saved = errno;
            close(fd);
            errno = saved;
            throw sys_error("read " + path);
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    if (close(fd) != 0) throw sys_error("close " + path);
    return true;
}

// Writes a file in one go, checking every step.
void write_file(const std::string& path, const std::string& content, mode_t mode) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) throw sys_error("create " + path);
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            int saved = errno;
            close(fd);
            errno = saved;
            throw sys_error("write " + path);
        }
        done += static_cast<size_t>(n);
    }
    if (fchmod(fd, mode) != 0) throw sys_error("chmod " + path);
    if (close(fd) != 0) throw sys_error("close " + path);
}

// mkdir + chown + chmod, the latter last so setgid/sticky bits survive.
void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
    if (mkdir(path.c_str(), 0700) != 0) throw sys_error("mkdir " + path);
    if (chown(path.c_str(), uid, gid) != 0) throw sys_error("chown " + path);
    if (chmod(path.c_str(), mode) != 0) throw sys_error("chmod " + path);
}

// Moves a file's timestamps into the past (Postfix distrusts just-written config files).
void backdate(const std::string& path, int seconds_ago) {
    struct timeval now {};
    if (gettimeofday(&now, nullptr) != 0) throw sys_error("gettimeofday");
    struct timeval times[2] = {now, now};
    times[0].tv_sec -= seconds_ago;
    times[1].tv_sec -= seconds_ago;
    if (utimes(path.c_str(), times) != 0) throw sys_error("utimes " + path);
}

// Counts files recursively; races with Postfix moving files are tolerated.
std::uint64_t count_files(const std::string& dir) {
    std::error_code ec;
    std::uint64_t n = 0;
    fs::recursive_directory_iterator it(dir, ec), end;
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory) return 0;
        throw Error("expected to read queue directory " + dir + ", found error: " + ec.message());
    }
    for (; it != end; it.increment(ec)) {
        if (ec) {
            // A subdirectory vanished under us; restart is not needed for a snapshot.
            ec.clear();
            continue;
        }
        std::error_code sec;
        if (it->is_regular_file(sec)) ++n;
    }
    return n;
}

// /proc/locks names each locked file as MAJOR:MINOR:INODE (hex, hex,
// decimal); blocked waiters ("->") name the same files again.
std::uint64_t count_locked_files(const std::string& dir) {
    std::set<std::tuple<unsigned, unsigned, unsigned long>> locked;
    std::string text;
    if (!read_file_if_exists("/proc/locks", text)) return 0;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string field;
        while (f >> field) {
            unsigned major = 0, minor = 0;
            unsigned long inode = 0;
            char extra = 0;
            if (std::sscanf(field.c_str(), "%x:%x:%lu%c", &major, &minor, &inode, &extra) == 3) {
                locked.insert({major, minor, inode});
                break;
            }
        }
    }
    std::uint64_t n = 0;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, ec), end;
    if (ec) return 0;
    for (; it != end; it.increment(ec)) {
        if (ec) {
            ec.clear();
            continue;
        }
        struct stat st {};
        if (lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (locked.count(
                {major(st.st_dev), minor(st.st_dev), static_cast<unsigned long>(st.st_ino)}))
            ++n;
    }
    return n;
}

// Recursive delete that reports instead of throwing (used from destructors).
std::string remove_tree(const std::string& path) noexcept {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) return "could not remove " + path + ": " + ec.message();
    return "";
}

// getpwnam wrapper.
UserIds lookup_user(const std::string& name) {
    errno = 0;
    struct passwd* pw = getpwnam(name.c_str());
    if (pw == nullptr) {
        if (errno != 0) throw sys_error("getpwnam " + name);
        throw Error("expected a user named '" + name + "' on this machine, found none");
    }
    return {pw->pw_uid, pw->pw_gid};
}

// getgrnam wrapper.
gid_t lookup_group(const std::string& name) {
    errno = 0;
    struct group* gr = getgrnam(name.c_str());
    if (gr == nullptr) {
        if (errno != 0) throw sys_error("getgrnam " + name);
        throw Error("expected a group named '" + name + "' on this machine, found none");
    }
    return gr->gr_gid;
}

// Creates the directory with mkdtemp and opens it up to 0755 so that
// delivery agents running as other users can traverse it.
WorkDir::WorkDir(const std::string& prefix) {
    std::vector<char> tmpl(prefix.begin(), prefix.end());
    for (int i = 0; i < 6; ++i)
        tmpl.push_back('X');
    tmpl.push_back('\0');
    if (mkdtemp(tmpl.data()) == nullptr) throw sys_error("mkdtemp " + prefix + "XXXXXX");
    path_ = tmpl.data();
    if (chmod(path_.c_str(), 0755) != 0) {
        Error err = sys_error("chmod " + path_);
        rmdir(path_.c_str());
        throw err;
    }
}

// Removes the directory only when asked to.
WorkDir::~WorkDir() {
    if (!remove_) return;
    std::string err = remove_tree(path_);
    if (!err.empty()) std::fprintf(stderr, "compat-run: warning: %s\n", err.c_str());
}

} // namespace compat
