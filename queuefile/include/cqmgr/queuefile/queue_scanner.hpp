// A walk over one queue directory that yields one name at a time, descending
// into one-character (hash) subdirectories as Postfix's scanner does. Only
// as much of the directory is read as has been asked for, so the first
// message of a large queue can go out before the whole queue is listed.
#pragma once

#include <dirent.h>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::queuefile {

class QueueScanner {
  public:
    QueueScanner() = default;
    QueueScanner(const QueueScanner&) = delete;
    QueueScanner& operator=(const QueueScanner&) = delete;
    ~QueueScanner();

    // Starts a new pass over `queue` (relative to the working directory),
    // ending any pass still open. A missing directory gives an empty pass.
    void start(const std::string& queue);
    // The next name that passes queue_id_ok, or nullopt at the end of the pass.
    // Names added or removed during the pass may or may not be seen (readdir).
    std::optional<std::string> next();

  private:
    struct Level {
        DIR* dir;
        std::string path;
        int depth;
    };
    // Closes every open directory.
    void stop();
    std::vector<Level> open_;
};

} // namespace cqmgr::queuefile
