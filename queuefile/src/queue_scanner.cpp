#include "cqmgr/queuefile/queue_scanner.hpp"

#include "cqmgr/queuefile/queue_layout.hpp"

#include <algorithm>
#include <string_view>
#include <sys/stat.h>
#include <time.h>

namespace cqmgr::queuefile {

namespace {
// Deeper than any hash_queue_depth Postfix allows.
constexpr int max_depth = 16;

int64_t realtime_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
} // namespace

QueueScanner::~QueueScanner() {
    stop();
}

void QueueScanner::stop() {
    for (auto& l : open_)
        if (l.dir) ::closedir(l.dir);
    open_.clear();
}

void QueueScanner::start(const std::string& queue, DirStamps* stamps, Listing listing) {
    stop();
    stamps_ = stamps;
    listing_ = stamps ? listing : Listing::every;
    listed_ = unchanged_ = 0;
    seen_.clear();
    ++pass_;
    running_ = true;
    if (listing_ == Listing::changed) look_ahead(queue, 0);
    enter(queue, 0);
}

QueueScanner::Seen QueueScanner::look(const std::string& path) {
    // The clock first, then the stat, then the listing: a change after the
    // stat moves the mtime away from what is recorded (dir_stamps.hpp).
    Seen s;
    s.before_ns = realtime_ns();
    struct stat st;
    if (::stat(path.c_str(), &st) < 0 || !S_ISDIR(st.st_mode)) return s;
    s.dir = true;
    s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    return s;
}

void QueueScanner::look_ahead(const std::string& path, int depth) {
    Seen s = look(path);
    seen_[path] = s;
    const std::string* subdirs = s.dir ? stamps_->subdirs(path) : nullptr;
    if (!subdirs || depth >= max_depth) return;
    for (char c : *subdirs)
        look_ahead(path + "/" + c, depth + 1);
}

bool QueueScanner::enter(const std::string& path, int depth) {
    if (!stamps_) {
        DIR* d = ::opendir(path.c_str());
        if (d) open_.push_back({d, path, depth, 0, 0, {}});
        return d != nullptr;
    }
    // A directory looked at when the pass started is judged by that look;
    // one found since (a new subdirectory) is looked at now.
    Seen s;
    if (auto it = seen_.find(path); it != seen_.end())
        s = it->second;
    else
        s = look(path);
    if (!s.dir) {
        stamps_->forget(path);
        return false;
    }
    if (listing_ == Listing::changed) {
        if (const std::string* subdirs = stamps_->unchanged(path, s.mtime_ns)) {
            ++unchanged_;
            census_[path].pass = pass_; // no name came or went
            open_.push_back({nullptr, path, depth, s.mtime_ns, s.before_ns, *subdirs});
            return true;
        }
    }
    DIR* d = ::opendir(path.c_str());
    if (!d) {
        stamps_->forget(path);
        return false;
    }
    ++listed_;
    open_.push_back({d, path, depth, s.mtime_ns, s.before_ns, {}});
    return true;
}

std::optional<std::string> QueueScanner::next() {
    while (!open_.empty()) {
        Level& l = open_.back();
        if (!l.dir) {
            if (l.next_subdir >= l.subdirs.size()) {
                open_.pop_back();
                continue;
            }
            std::string sub = l.path + "/" + l.subdirs[l.next_subdir++];
            enter(sub, l.depth + 1); // l is not valid after this
            continue;
        }
        dirent* e = ::readdir(l.dir);
        if (!e) {
            census_[l.path] = {l.census, pass_};
            if (stamps_) stamps_->listed(l.path, l.mtime_ns, l.before_ns, std::move(l.subdirs));
            ::closedir(l.dir);
            open_.pop_back();
            continue;
        }
        std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (name.size() == 1 && l.depth < max_depth) {
            char c = name[0];
            std::string sub = l.path + "/" + c;
            int depth = l.depth + 1;
            std::size_t at = open_.size() - 1;
            if (enter(sub, depth)) open_[at].subdirs += c; // l is not valid after enter()
            continue;
        }
        if (queue_id_ok(name)) {
            ++l.census.files;
            return std::string(name);
        }
    }
    if (running_) {
        // The pass reached its end: directories it did not come across are
        // gone.
        running_ = false;
        counted_ = true;
        std::erase_if(census_, [this](const auto& kv) { return kv.second.pass != pass_; });
    }
    return std::nullopt;
}

std::optional<QueueScanner::Census> QueueScanner::census() const {
    if (!counted_) return std::nullopt;
    Census c;
    for (const auto& [path, d] : census_) {
        c.files += d.census.files;
        if (d.census.oldest && (!c.oldest || d.census.oldest < c.oldest))
            c.oldest = d.census.oldest;
    }
    return c;
}

void QueueScanner::born_last(int64_t born) {
    if (open_.empty() || !open_.back().dir || born <= 0) return;
    Census& c = open_.back().census;
    if (!c.oldest || born < c.oldest) c.oldest = born;
}

void QueueScanner::left_last() {
    if (open_.empty() || !open_.back().dir) return;
    Census& c = open_.back().census;
    if (c.files > 0) --c.files;
}

void QueueScanner::left(const std::string& dir) {
    for (const Level& l : open_)
        if (l.dir && l.path == dir) return; // being listed: it may or may not count the file
    auto it = census_.find(dir);
    if (it != census_.end() && it->second.census.files > 0) --it->second.census.files;
}

} // namespace cqmgr::queuefile
