#include "cqmgr/queuefile/dir_stamps.hpp"

namespace cqmgr::queuefile {

void DirStamps::listed(const std::string& path, int64_t mtime_ns, int64_t before_ns,
                       std::string subdirs) {
    dirs_[path] = Stamp{mtime_ns, mtime_ns + settle_ns <= before_ns, std::move(subdirs)};
}

const std::string* DirStamps::unchanged(const std::string& path, int64_t mtime_ns) const {
    auto it = dirs_.find(path);
    if (it == dirs_.end() || !it->second.settled || it->second.mtime_ns != mtime_ns) return nullptr;
    return &it->second.subdirs;
}

} // namespace cqmgr::queuefile
