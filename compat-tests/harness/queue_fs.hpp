// A queue directory on a file system of its own: a small loop-mounted ext4
// image, so that a scenario can fill it up (ENOSPC) without touching the
// machine's disks, or a tmpfs, so that a benchmark measures the queue
// manager rather than the disk.
#pragma once

#include <optional>
#include <string>

namespace compat {

// What keeps this machine from loop-mounting an image (root,
// /dev/loop-control, a free loop device), or nullopt when nothing does.
std::optional<std::string> loop_devices_missing();

class QueueFs {
  public:
    // Nothing happens until mount().
    QueueFs() = default;
    QueueFs(const QueueFs&) = delete;
    QueueFs& operator=(const QueueFs&) = delete;
    ~QueueFs();

    // Creates `image` (size_mib MiB), makes an ext4 file system without a
    // root reserve on it and mounts it on `mount_point` (an existing, empty
    // directory). Throws Unavailable when loop devices cannot be used.
    void mount(const std::string& image, const std::string& mount_point, int size_mib);
    // Mounts a tmpfs (in RAM, no size limit beyond the kernel's default of
    // half the memory) on `mount_point`, an existing, empty directory: a
    // queue whose file operations cost no disk I/O.
    void mount_tmpfs(const std::string& mount_point);
    // Unmounts (lazily if busy); safe to call twice and when never mounted.
    void unmount() noexcept;
    bool mounted() const { return mounted_; }

    // Writes a root-owned filler file until the file system is full
    // (ENOSPC); returns the bytes written.
    long long fill();
    // Removes the filler file again.
    void free_space();

    const std::string& mount_point() const { return mount_point_; }
    std::string filler_path() const { return mount_point_ + "/compat-filler"; }

  private:
    std::string mount_point_;
    bool mounted_ = false;
};

} // namespace compat
