#include "cqmgr/core/peer_index.hpp"

#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/core/structures.hpp"

namespace cqmgr::core {

PeerIndex::PeerIndex() = default;
PeerIndex::~PeerIndex() = default;

uint32_t PeerIndex::home(const Queue* q) const {
    // Fibonacci hashing of the address; its low bits are alignment.
    uint64_t h = (reinterpret_cast<uintptr_t>(q) >> 4) * 0x9E3779B97F4A7C15ull;
    return static_cast<uint32_t>(h >> 32) & mask_;
}

uint32_t PeerIndex::slot_of(const Queue* q) const {
    for (uint32_t s = home(q);; s = (s + 1) & mask_)
        if (!table_[s] || table_[s]->queue == q) return s;
}

Peer* PeerIndex::find_indexed(const Queue* q) const {
    return table_[slot_of(q)];
}

void PeerIndex::insert(Peer* p) {
    table_[slot_of(p->queue)] = p;
}

void PeerIndex::remove_slot(uint32_t s) {
    // Backward-shift deletion: an entry after the hole moves into it unless
    // its probe starts after the hole (cyclically), so that every probe
    // still meets its entry before an empty slot.
    for (uint32_t next = (s + 1) & mask_;; next = (next + 1) & mask_) {
        Peer* p = table_[next];
        if (!p) break;
        uint32_t h = home(p->queue);
        bool stays = s <= next ? (s < h && h <= next) : (s < h || h <= next);
        if (stays) continue;
        table_[s] = p;
        s = next;
    }
    table_[s] = nullptr;
}

void PeerIndex::leaving(const Peer& p) {
    if (count_ == 0) panic("peer index: a peer leaves a job without peers");
    if (table_) {
        uint32_t s = slot_of(p.queue);
        if (table_[s] != &p) panic("peer index: a leaving peer is not indexed");
        remove_slot(s);
    }
    if (--count_ == 0) table_.reset();
}

} // namespace cqmgr::core
