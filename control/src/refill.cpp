#include "cqmgr/control/refill.hpp"

namespace cqmgr::control {

namespace {
// The object's member list, making it an object first if it is not one.
Json::object_t& members_of(Json& j) {
    if (!j.is_object()) j = Json::object();
    return j.get_ref<Json::object_t&>();
}
} // namespace

Refill::Refill(Json& object) : members_(members_of(object)) {}

Refill::~Refill() {
    if (members_.size() > next_) members_.erase(members_.begin() + next_, members_.end());
}

// The ordered map is a vector of pairs underneath: its positions are stable
// and its members can be reached by position.
Json& Refill::operator[](std::string_view key) {
    auto at = members_.begin() + static_cast<std::ptrdiff_t>(next_);
    if (at == members_.end() || at->first != key) {
        members_.erase(at, members_.end());
        members_.emplace_back(std::string(key), Json());
        at = members_.end() - 1;
    }
    ++next_;
    return at->second;
}

void Refill::string(std::string_view key, const std::string& value) {
    Json& slot = (*this)[key];
    if (slot.is_string())
        slot.get_ref<Json::string_t&>() = value;
    else
        slot = value;
}

void resize_array(Json& list, std::size_t n) {
    if (!list.is_array()) list = Json::array();
    list.get_ref<Json::array_t&>().resize(n);
}

} // namespace cqmgr::control
