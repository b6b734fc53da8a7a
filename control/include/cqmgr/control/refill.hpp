// Rewriting a reply in place. `cqmgrctl top` asks for the same `queues`
// reply every second, and with 1,000 destinations building a fresh tree of
// nlohmann objects, and freeing it, cost more than serialising it: each
// object, member list and string is an allocation, in a heap that 20,000
// messages have fragmented. A tree kept between replies and overwritten
// member by member, in the order it was first written, allocates only when
// its shape changes.
#pragma once

#include "cqmgr/control/reply.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cqmgr::control {

class Refill {
  public:
    // Makes `object` an object if it is not one yet (a new slot is null).
    explicit Refill(Json& object);
    Refill(const Refill&) = delete;
    Refill& operator=(const Refill&) = delete;
    // Drops the members after the last one written (a shape that shrank).
    ~Refill();

    // The value of the next member, named `key`. When the member at this
    // position has that name (every refill after the first) it is reused;
    // otherwise the members from here on are dropped and `key` is appended,
    // so the object always ends up with the members in the order written.
    Json& operator[](std::string_view key);
    // Sets the next member to a string, reusing the member's own string.
    void string(std::string_view key, const std::string& value);

  private:
    Json::object_t& members_;
    std::size_t next_ = 0;
};

// Makes `list` an array of exactly `n` elements; the first ones keep their
// trees for the caller to refill, new ones are null.
void resize_array(Json& list, std::size_t n);

} // namespace cqmgr::control
