// The messages of the active queue by queue ID, owned by the table.
//
// An intrusive hash set: each message carries its own link and the hash of
// its ID (Message::table_hook), so taking a message in allocates nothing
// beyond the occasional larger bucket array, and a lookup reads the
// buckets and the messages themselves.  A std::unordered_map kept a node of
// its own per message (48 bytes), and its lookups, three per message (the
// scan's "already in core?", the insert, the removal), cost 3-4 % of the
// daemon's user time on the flush workload, mostly in cache misses.
#pragma once

#include "message.hpp"

#include <boost/intrusive/unordered_set.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

class MessageTable {
  public:
    MessageTable();
    ~MessageTable();
    MessageTable(const MessageTable&) = delete;
    MessageTable& operator=(const MessageTable&) = delete;

    // Messages in the table.
    std::size_t size() const { return set_.size(); }
    // True when a message with queue ID `id` is in the table.
    bool contains(std::string_view id) const { return find(id) != nullptr; }
    // The message with queue ID `id`, or null.
    Message* find(std::string_view id) const;
    // Takes `m` in; its ID must not be in the table already, nor change
    // while it is there.
    Message& add(std::unique_ptr<Message> m);
    // Takes `m`, which must be in the table, out and destroys it.
    void remove(Message& m);

  private:
    struct IdOf {
        using type = std::string_view;
        std::string_view operator()(const Message& m) const { return m.id; }
    };
    using Set = boost::intrusive::unordered_set<
        Message, boost::intrusive::member_hook<Message, TableHook, &Message::table_hook>,
        boost::intrusive::key_of_value<IdOf>, boost::intrusive::hash<std::hash<std::string_view>>,
        boost::intrusive::power_2_buckets<true>, boost::intrusive::constant_time_size<true>>;

    // Doubles the bucket array when the table holds as many messages as it
    // has buckets.
    void grow();

    std::vector<Set::bucket_type> buckets_;
    Set set_;
};

} // namespace cqmgr::qmgr
