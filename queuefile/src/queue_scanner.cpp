#include "cqmgr/queuefile/queue_scanner.hpp"

#include "cqmgr/queuefile/queue_layout.hpp"

#include <string_view>

namespace cqmgr::queuefile {

namespace {
// Deeper than any hash_queue_depth Postfix allows.
constexpr int max_depth = 16;
} // namespace

QueueScanner::~QueueScanner() {
    stop();
}

void QueueScanner::stop() {
    for (auto& l : open_)
        ::closedir(l.dir);
    open_.clear();
}

void QueueScanner::start(const std::string& queue) {
    stop();
    if (DIR* d = ::opendir(queue.c_str())) open_.push_back({d, queue, 0});
}

std::optional<std::string> QueueScanner::next() {
    while (!open_.empty()) {
        Level& l = open_.back();
        dirent* e = ::readdir(l.dir);
        if (!e) {
            ::closedir(l.dir);
            open_.pop_back();
            continue;
        }
        std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (name.size() == 1 && l.depth < max_depth) {
            std::string sub = l.path + "/" + std::string(name);
            int depth = l.depth + 1;
            if (DIR* d = ::opendir(sub.c_str())) open_.push_back({d, sub, depth});
            continue;
        }
        if (queue_id_ok(name)) return std::string(name);
    }
    return std::nullopt;
}

} // namespace cqmgr::queuefile
