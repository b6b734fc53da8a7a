#include "due_index.hpp"

namespace cqmgr::qmgr {

void DueIndex::note(const std::string& id, int64_t mtime, unsigned pass) {
    entries_[id] = Entry{mtime, pass};
}

bool DueIndex::not_due(const std::string& id, int64_t now, unsigned pass, int64_t& mtime) {
    auto it = entries_.find(id);
    if (it == entries_.end() || it->second.mtime <= now + 1) return false;
    it->second.seen = pass;
    mtime = it->second.mtime;
    return true;
}

void DueIndex::sweep(unsigned pass) {
    for (auto it = entries_.begin(); it != entries_.end();)
        it = it->second.seen < pass ? entries_.erase(it) : std::next(it);
}

} // namespace cqmgr::qmgr
