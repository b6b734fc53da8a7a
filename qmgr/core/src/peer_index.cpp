#include "cqmgr/core/peer_index.hpp"

#include "cqmgr/core/structures.hpp"

namespace cqmgr::core {

PeerIndex::PeerIndex() = default;
PeerIndex::~PeerIndex() = default;

uint32_t PeerIndex::home(const Queue* q) const {
    // Fibonacci hashing of the address; its low bits are alignment.
    uint64_t h = (reinterpret_cast<uintptr_t>(q) >> 4) * 0x9E3779B97F4A7C15ull;
    return static_cast<uint32_t>(h >> 32) & mask();
}

uint32_t PeerIndex::slot_of(const Queue* q) const {
    for (uint32_t s = home(q);; s = (s + 1) & mask())
        if (slot(s) == 0 || peers_[slot(s) - 1]->queue == q) return s;
}

size_t PeerIndex::position(const Queue* q) const {
    if (table_) {
        uint32_t v = slot(slot_of(q));
        return v == 0 ? peers_.size() : v - 1;
    }
    for (size_t i = 0; i < peers_.size(); ++i)
        if (peers_[i]->queue == q) return i;
    return peers_.size();
}

Peer* PeerIndex::find(const Queue* q) const {
    size_t i = position(q);
    return i < peers_.size() ? peers_[i].get() : nullptr;
}

void PeerIndex::rebuild(uint32_t slots) {
    table_ = std::make_unique<uint32_t[]>(1 + slots); // zeroed: all empty
    table_[0] = slots - 1;
    for (uint32_t i = 0; i < peers_.size(); ++i)
        insert(i);
}

void PeerIndex::insert(uint32_t i) {
    slot(slot_of(peers_[i]->queue)) = i + 1;
}

void PeerIndex::remove_slot(uint32_t s) {
    // Backward-shift deletion: an entry after the hole moves into it unless
    // its probe starts after the hole (cyclically), so that every probe
    // still meets its entry before an empty slot.
    for (uint32_t next = (s + 1) & mask();; next = (next + 1) & mask()) {
        uint32_t v = slot(next);
        if (v == 0) break;
        uint32_t h = home(peers_[v - 1]->queue);
        bool stays = s <= next ? (s < h && h <= next) : (s < h || h <= next);
        if (stays) continue;
        slot(s) = v;
        s = next;
    }
    slot(s) = 0;
}

Peer& PeerIndex::add(std::unique_ptr<Peer> p) {
    peers_.push_back(std::move(p));
    if (!table_ && peers_.size() > few) {
        rebuild(32);
    } else if (table_) {
        // At most half full, so that probes stay short.
        if (2 * peers_.size() > static_cast<size_t>(mask()) + 1)
            rebuild(2 * (mask() + 1));
        else
            insert(static_cast<uint32_t>(peers_.size() - 1));
    }
    return *peers_.back();
}

void PeerIndex::erase(const Queue* q) {
    size_t i = position(q);
    if (i == peers_.size()) return;
    // The last peer takes the place of the one that goes.
    size_t last = peers_.size() - 1;
    if (table_) {
        remove_slot(slot_of(q));
        if (i != last) slot(slot_of(peers_[last]->queue)) = static_cast<uint32_t>(i + 1);
    }
    if (i != last) std::swap(peers_[i], peers_[last]);
    peers_.pop_back();
    if (peers_.empty()) {
        table_.reset();
        decltype(peers_)().swap(peers_);
    }
}

} // namespace cqmgr::core
