#include "queue_fs.hpp"

#include "error.hpp"
#include "process.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace compat {
namespace {

// Runs a system tool (mkfs, mount, losetup) with its output in `log`.
void run_tool(const std::vector<std::string>& argv, const std::string& log) {
    SpawnOptions o;
    o.argv = argv;
    o.output_path = log;
    run_command(o, std::chrono::seconds(60));
}

// The first existing path among the usual system directories.
std::string system_tool(const std::string& name) {
    for (const char* d : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
        std::string p = std::string(d) + "/" + name;
        if (access(p.c_str(), X_OK) == 0) return p;
    }
    return "";
}

} // namespace

// Asks losetup for a free device; that covers the kernel module, the
// control device and the permissions in one probe.
std::optional<std::string> loop_devices_missing() {
    if (geteuid() != 0) return "loop mounts need root";
    for (const char* tool : {"losetup", "mkfs.ext4", "mount", "umount"})
        if (system_tool(tool).empty())
            return std::string("no ") + tool + " in /usr/sbin, /sbin, /usr/bin or /bin";
    if (access("/dev/loop-control", F_OK) != 0)
        return std::string("/dev/loop-control: ") + std::strerror(errno);
    SpawnOptions o;
    o.argv = {system_tool("losetup"), "-f"};
    Process p = Process::spawn(o);
    auto st = p.wait_for(std::chrono::seconds(10));
    if (!st || !WIFEXITED(*st) || WEXITSTATUS(*st) != 0) {
        if (!st) p.terminate();
        return "`losetup -f` found no free loop device (" +
               (st ? describe_wait_status(*st) : std::string("timed out")) + ")";
    }
    return std::nullopt;
}

QueueFs::~QueueFs() {
    unmount();
}

// mkfs.ext4 -m 0 on a sparse image, then mount -o loop.
void QueueFs::mount(const std::string& image, const std::string& mount_point, int size_mib) {
    if (auto why = loop_devices_missing())
        throw Unavailable("queue_fs needs a loop-mounted ext4 image, but " + *why);
    int fd = open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw sys_error("create " + image);
    bool ok = ftruncate(fd, static_cast<off_t>(size_mib) * 1024 * 1024) == 0;
    int saved = errno;
    close(fd);
    if (!ok) {
        errno = saved;
        throw sys_error("size " + image);
    }
    std::string log = image + ".log";
    run_tool({system_tool("mkfs.ext4"), "-q", "-F", "-m", "0", image}, log);
    run_tool({system_tool("mount"), "-o", "loop", image, mount_point}, log);
    mount_point_ = mount_point;
    mounted_ = true;
    if (chmod(mount_point.c_str(), 0755) != 0) throw sys_error("chmod " + mount_point);
}

// mount(2) directly: a tmpfs needs no device and no tool.
void QueueFs::mount_tmpfs(const std::string& mount_point) {
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
        throw sys_error("mount tmpfs on " + mount_point);
    mount_point_ = mount_point;
    mounted_ = true;
}

// umount(2) first; a busy mount (a process that outlived the instance) is
// detached lazily so that the run never hangs. The loop device goes with it
// (mount -o loop sets autoclear).
void QueueFs::unmount() noexcept {
    if (!mounted_) return;
    mounted_ = false;
    for (int i = 0; i < 20; ++i) {
        if (umount2(mount_point_.c_str(), 0) == 0) return;
        if (errno != EBUSY) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (umount2(mount_point_.c_str(), MNT_DETACH) != 0)
        std::fprintf(stderr, "compat-run: warning: umount %s: %s\n", mount_point_.c_str(),
                     std::strerror(errno));
}

// mkfs -m 0 left no root reserve, so once root's filler hits ENOSPC the file
// system is full for the postfix user too.
long long QueueFs::fill() {
    if (!mounted_) throw Error("fill_fs: expected a mounted queue_fs, found none");
    std::string path = filler_path();
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) throw sys_error("fill_fs: create " + path);
    std::vector<char> block(64 * 1024, 'x');
    long long total = 0;
    for (;;) {
        ssize_t n = write(fd, block.data(), block.size());
        if (n > 0) {
            total += n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != ENOSPC) {
            Error e = sys_error("fill_fs: write " + path);
            close(fd);
            throw e;
        }
        // A short final block: try smaller writes until nothing fits.
        if (block.size() > 1) {
            block.resize(block.size() / 2);
            continue;
        }
        break;
    }
    fsync(fd);
    close(fd);
    return total;
}

void QueueFs::free_space() {
    std::string path = filler_path();
    if (unlink(path.c_str()) != 0 && errno != ENOENT) throw sys_error("free_fs: unlink " + path);
}

} // namespace compat
