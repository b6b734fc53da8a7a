#include "cqmgr/core/peer_index.hpp"

#include "cqmgr/core/structures.hpp"

namespace cqmgr::core {

PeerIndex::PeerIndex() = default;
PeerIndex::~PeerIndex() = default;

size_t PeerIndex::position(const Queue* q) const {
    if (by_queue_) {
        auto it = by_queue_->find(q);
        return it == by_queue_->end() ? peers_.size() : it->second;
    }
    for (size_t i = 0; i < peers_.size(); ++i)
        if (peers_[i]->queue == q) return i;
    return peers_.size();
}

Peer* PeerIndex::find(const Queue* q) const {
    size_t i = position(q);
    return i < peers_.size() ? peers_[i].get() : nullptr;
}

Peer& PeerIndex::add(std::unique_ptr<Peer> p) {
    peers_.push_back(std::move(p));
    if (!by_queue_ && peers_.size() > few) {
        by_queue_ = std::make_unique<std::unordered_map<const Queue*, size_t>>();
        for (size_t i = 0; i < peers_.size(); ++i)
            by_queue_->emplace(peers_[i]->queue, i);
    } else if (by_queue_) {
        by_queue_->emplace(peers_.back()->queue, peers_.size() - 1);
    }
    return *peers_.back();
}

void PeerIndex::erase(const Queue* q) {
    size_t i = position(q);
    if (i == peers_.size()) return;
    // The last peer takes the place of the one that goes.
    size_t last = peers_.size() - 1;
    if (by_queue_) {
        by_queue_->erase(q);
        if (i != last) (*by_queue_)[peers_[last]->queue] = i;
    }
    if (i != last) std::swap(peers_[i], peers_[last]);
    peers_.pop_back();
    if (peers_.empty()) {
        by_queue_.reset();
        decltype(peers_)().swap(peers_);
    }
}

} // namespace cqmgr::core
