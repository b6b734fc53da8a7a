// Where queue files live: queue names, queue IDs, hashed subdirectories
// (hash_queue_names / hash_queue_depth), and moving files between queues the
// way Postfix does (rename, creating missing hash directories on demand).
#pragma once

#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace cqmgr::queuefile {

// Mode bits that carry meaning on queue files.
namespace qmode {
inline constexpr mode_t ready = 0700;      // u=rwx: complete, may be delivered
inline constexpr mode_t unthrottle = 0040; // g+r: flush this one (postqueue -i)
inline constexpr mode_t expire = 0010;     // g+x: force-expire (postsuper -e)
} // namespace qmode

// True for a name any scan would accept: 1-255 chars of [A-Za-z0-9_].
bool queue_id_ok(std::string_view id);

class QueueLayout {
  public:
    // `hash_queue_names` as main.cf lists them (any case).
    explicit QueueLayout(const std::vector<std::string>& hash_queue_names = {"deferred", "defer"},
                         int hash_queue_depth = 1);

    // Returns the path of `id` in `queue`, relative to the queue directory.
    std::string path(std::string_view queue, std::string_view id) const;
    // The same path, written into `out` (whose room is reused: a path is
    // longer than what std::string holds without allocating, and the
    // daemon builds several per message).
    void path_into(std::string& out, std::string_view queue, std::string_view id) const;
    // True when `queue` is hashed.
    bool hashed(std::string_view queue) const;

    // Moves `id` from one queue to another with rename(2); creates missing
    // hash directories and retries once.  Returns 0, or an errno value.
    int move(std::string_view from, std::string_view to, std::string_view id) const;

  private:
    std::vector<std::string> hashed_;
    int depth_;
    // move()'s paths, their room reused from call to call.
    mutable std::string from_path_, to_path_;
};

// The hash key of a queue ID: the ID itself for short IDs, the microseconds
// re-encoded as %05X for long IDs.
std::string queue_hash_key(std::string_view id);

// Lists the file names in a queue directory, descending into one-character
// subdirectories as Postfix's scanner does; names that fail queue_id_ok are
// skipped.
std::vector<std::string> scan_queue(const std::string& queue);

} // namespace cqmgr::queuefile
