#include "cqmgr/queuefile/queue_layout.hpp"

#include "cqmgr/queuefile/queue_scanner.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <unistd.h>

namespace cqmgr::queuefile {

bool queue_id_ok(std::string_view id) {
    if (id.empty() || id.size() > 255) return false;
    for (char c : id) {
        bool ok =
            (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) return false;
    }
    return true;
}

namespace {
constexpr std::string_view safe_alphabet = "0123456789BCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz";

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}
} // namespace

std::string queue_hash_key(std::string_view id) {
    // A long ID has its last 'z' at index >= 10; the 4 characters before it
    // are the microseconds in base 52.
    auto z = id.rfind('z');
    if (z == std::string_view::npos || z < 10) return std::string(id);
    unsigned long usec = 0;
    for (size_t i = z - 4; i < z; ++i) {
        auto v = safe_alphabet.find(id[i]);
        if (v == std::string_view::npos) {
            usec = 0;
            break;
        }
        usec = usec * 52 + v;
    }
    char buf[16];
    std::snprintf(buf, sizeof buf, "%05lX", usec);
    return buf;
}

QueueLayout::QueueLayout(const std::vector<std::string>& names, int depth)
    : depth_(depth < 1 ? 1 : depth) {
    for (const auto& n : names)
        hashed_.push_back(lower(n));
}

bool QueueLayout::hashed(std::string_view queue) const {
    // Asked for every path: compared without a lower-cased copy.
    auto same = [queue](const std::string& h) {
        return h.size() == queue.size() &&
               std::equal(h.begin(), h.end(), queue.begin(), [](char a, char b) {
                   return a == static_cast<char>(std::tolower(static_cast<unsigned char>(b)));
               });
    };
    return std::find_if(hashed_.begin(), hashed_.end(), same) != hashed_.end();
}

std::string QueueLayout::path(std::string_view queue, std::string_view id) const {
    std::string p;
    path_into(p, queue, id);
    return p;
}

void QueueLayout::path_into(std::string& p, std::string_view queue, std::string_view id) const {
    // Sized once: every message builds a handful of these.
    p.clear();
    p.reserve(queue.size() + 1 + 2 * static_cast<size_t>(depth_) + id.size());
    p += queue;
    p += '/';
    if (hashed(queue)) {
        std::string key = queue_hash_key(id);
        for (int i = 0; i < depth_; ++i) {
            p += i < static_cast<int>(key.size()) ? key[i] : '_';
            p += '/';
        }
    }
    p += id;
}

int QueueLayout::move(std::string_view from, std::string_view to, std::string_view id) const {
    path_into(from_path_, from, id);
    path_into(to_path_, to, id);
    const std::string &src = from_path_, &dst = to_path_;
    if (::rename(src.c_str(), dst.c_str()) == 0) return 0;
    int err = errno;
    if (err == ENOENT && ::access(src.c_str(), F_OK) == 0) {
        // The source exists, so a hash directory of the target is missing.
        std::string dir;
        size_t pos = 0;
        while ((pos = dst.find('/', pos + 1)) != std::string::npos) {
            dir = dst.substr(0, pos);
            if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) return errno;
        }
        if (::rename(src.c_str(), dst.c_str()) == 0) return 0;
        err = errno;
    }
    // Postfix's sane_rename: a vanished source with an existing target is success.
    if (err == ENOENT && ::access(src.c_str(), F_OK) != 0 && ::access(dst.c_str(), F_OK) == 0)
        return 0;
    return err;
}

std::vector<std::string> scan_queue(const std::string& queue) {
    std::vector<std::string> out;
    QueueScanner scanner;
    scanner.start(queue);
    while (auto id = scanner.next())
        out.push_back(std::move(*id));
    return out;
}

} // namespace cqmgr::queuefile
