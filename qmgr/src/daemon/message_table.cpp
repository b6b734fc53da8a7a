// The active queue's messages by queue ID (see message_table.hpp).
#include "message_table.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
constexpr std::size_t first_buckets = 64;
}

MessageTable::MessageTable()
    : buckets_(first_buckets), set_(Set::bucket_traits(buckets_.data(), buckets_.size())) {}

MessageTable::~MessageTable() {
    set_.clear_and_dispose([](Message* m) { delete m; });
}

Message* MessageTable::find(std::string_view id) const {
    auto it = set_.find(id);
    return it == set_.end() ? nullptr : const_cast<Message*>(&*it);
}

Message& MessageTable::add(std::unique_ptr<Message> m) {
    if (set_.size() >= buckets_.size()) grow();
    auto [it, inserted] = set_.insert(*m);
    if (!inserted) log::panic("message table: " + m->id + " is in the active queue already");
    return *m.release();
}

void MessageTable::remove(Message& m) {
    if (!m.table_hook.is_linked()) log::panic("message table: " + m.id + " is not in it");
    set_.erase(set_.iterator_to(m));
    delete &m;
}

void MessageTable::grow() {
    std::vector<Set::bucket_type> bigger(buckets_.size() * 2);
    set_.rehash(Set::bucket_traits(bigger.data(), bigger.size()));
    buckets_.swap(bigger);
}

} // namespace cqmgr::qmgr
