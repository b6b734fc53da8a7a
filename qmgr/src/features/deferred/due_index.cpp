#include "due_index.hpp"

#include <algorithm>
#include <limits>

namespace cqmgr::qmgr {

namespace {
uint32_t clamp_time(int64_t t) {
    return static_cast<uint32_t>(std::clamp<int64_t>(t, 0, std::numeric_limits<uint32_t>::max()));
}
} // namespace

void DueIndex::note(const std::string& id, int64_t time, int64_t born) {
    auto [it, added] = entries_.try_emplace(id, Slot{0, 0, 0});
    if (!added) detach(*it);
    it->second.time = clamp_time(time);
    it->second.born = clamp_time(born);
    it->second.where = static_cast<uint32_t>(parked_.size()) | parked_bit;
    parked_.push_back(&*it);
}

std::optional<int64_t> DueIndex::known(const std::string& id, int64_t* born) const {
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    if (born) *born = it->second.born;
    return it->second.time;
}

std::optional<DueIndex::Due> DueIndex::take_due(int64_t now) {
    if (order_.empty() || order_.front()->second.time > now + 1) return std::nullopt;
    Node* n = order_.front();
    Due d{n->first, n->second.time, n->second.born};
    detach(*n);
    entries_.erase(d.id);
    return d;
}

void DueIndex::forget(const std::string& id) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    detach(*it);
    entries_.erase(it);
}

void DueIndex::unpark() {
    if (parked_.empty()) return;
    if (parked_.size() > order_.size() / 4) {
        // Many at once (a full pass): rebuild the heap in linear time.
        order_.insert(order_.end(), parked_.begin(), parked_.end());
        parked_.clear();
        std::make_heap(order_.begin(), order_.end(), [](const Node* a, const Node* b) {
            return a->second.time > b->second.time;
        });
        for (std::size_t i = 0; i < order_.size(); ++i)
            place(i);
        return;
    }
    for (Node* n : parked_) {
        order_.push_back(n);
        place(order_.size() - 1);
        sift_up(order_.size() - 1);
    }
    parked_.clear();
}

void DueIndex::pass_ended(bool complete) {
    if (complete) {
        std::erase_if(entries_, [](const Node& n) { return !(n.second.where & parked_bit); });
        order_.clear();
    }
    unpark();
}

void DueIndex::detach(Node& n) {
    uint32_t w = n.second.where;
    if (w & parked_bit) {
        std::size_t i = w & ~parked_bit;
        parked_[i] = parked_.back();
        parked_[i]->second.where = static_cast<uint32_t>(i) | parked_bit;
        parked_.pop_back();
        return;
    }
    std::size_t i = w;
    Node* moved = order_.back();
    order_[i] = moved;
    order_.pop_back();
    if (i < order_.size()) {
        place(i);
        sift_up(i);
        if (moved->second.where == i) sift_down(i);
    }
}

void DueIndex::sift_up(std::size_t i) {
    while (i > 0) {
        std::size_t p = (i - 1) / 2;
        if (!earlier(i, p)) break;
        std::swap(order_[i], order_[p]);
        place(i);
        place(p);
        i = p;
    }
}

void DueIndex::sift_down(std::size_t i) {
    for (;;) {
        std::size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < order_.size() && earlier(l, m)) m = l;
        if (r < order_.size() && earlier(r, m)) m = r;
        if (m == i) return;
        std::swap(order_[i], order_[m]);
        place(i);
        place(m);
        i = m;
    }
}

} // namespace cqmgr::qmgr
