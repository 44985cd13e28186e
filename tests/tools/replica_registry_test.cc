// ReplicaRegistry (server/replica_registry.h): who a server remembers, by
// server id and UUID, from the first dump on; the cap that refuses a new
// replica rather than forget one with a position; expiry on an injected
// clock; takeovers that never move another replica's position.

#include "server/replica_registry.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace binlog {
namespace server {
namespace {

class ReplicaRegistryTest : public ::testing::Test {
 protected:
  ReplicaRegistryOptions Options(size_t max_replicas, absl::Duration expire_after,
                                 size_t max_uuids_per_server_id = 4) {
    ReplicaRegistryOptions o;
    o.max_replicas = max_replicas;
    o.max_uuids_per_server_id = max_uuids_per_server_id;
    o.expire_after = expire_after;
    o.now = [this] { return now_; };
    return o;
  }
  // Replica (id, uuid) dumps in `session` to file:pos, then disconnects.
  static void DumpTo(ReplicaRegistry* r, uint32_t session, uint32_t id, const std::string& uuid,
                     const std::string& file, uint64_t pos) {
    ASSERT_TRUE(r->BeginDump(session, id, uuid).ok());
    r->NoteSent(session, id, uuid, file, pos);
    r->EndDump(session, id, uuid);
  }
  static std::vector<uint32_t> Ids(const ReplicaRegistry& r) {
    std::vector<uint32_t> ids;
    for (const RememberedReplica& p : r.List()) ids.push_back(p.server_id);
    return ids;
  }

  absl::Time now_ = absl::FromUnixSeconds(1800000000);
};

TEST_F(ReplicaRegistryTest, ADumpWithoutAPositionLeavesNothingBehind) {
  ReplicaRegistry r(Options(10, absl::Hours(1)));
  ASSERT_TRUE(r.BeginDump(1, 7, "").ok());
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r.List()[0].connected);
  EXPECT_TRUE(r.List()[0].file.empty());
  r.EndDump(1, 7, "");
  EXPECT_EQ(r.size(), 0u);
}

TEST_F(ReplicaRegistryTest, AFullRegistryRefusesANewReplicaAndKeepsTheOthers) {
  ReplicaRegistry r(Options(2, absl::Hours(1)));
  DumpTo(&r, 1, 7, "", "b.000001", 100);
  DumpTo(&r, 2, 8, "", "b.000002", 200);
  absl::Status s = r.BeginDump(3, 9, "");
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_EQ(Ids(r), (std::vector<uint32_t>{7, 8}));
  // A replica already remembered needs no room.
  EXPECT_TRUE(r.BeginDump(4, 7, "").ok());
  // Once one has expired, it makes room.
  now_ += absl::Hours(1);
  EXPECT_TRUE(r.BeginDump(5, 9, "").ok());
  EXPECT_EQ(Ids(r), (std::vector<uint32_t>{7, 9}));
}

// The replicas expired to make room for a new one are returned, as
// ForgetExpired returns them, so the caller can say who was forgotten.
TEST_F(ReplicaRegistryTest, ReplicasForgottenToMakeRoomAreReturned) {
  ReplicaRegistry r(Options(2, absl::Hours(1)));
  DumpTo(&r, 1, 7, "", "b.000001", 100);
  DumpTo(&r, 2, 8, "", "b.000002", 200);
  now_ += absl::Hours(1);
  std::vector<RememberedReplica> gone;
  ASSERT_TRUE(r.BeginDump(3, 9, "", &gone).ok());
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0].server_id, 7u);
  EXPECT_EQ(gone[0].file, "b.000001");
  EXPECT_EQ(gone[1].server_id, 8u);
  RememberedReplica back;
  back.server_id = 10;
  back.file = "b.000003";
  back.position = 4;
  std::vector<RememberedReplica> none;
  EXPECT_TRUE(r.Remember(back, &none));
  EXPECT_TRUE(none.empty());
}

// One server id with a new UUID for each dump holds at most
// max_uuids_per_server_id entries; other server ids are not affected.
TEST_F(ReplicaRegistryTest, OneServerIdHoldsAtMostItsUuidCap) {
  ReplicaRegistry r(Options(100, absl::Hours(1), 2));
  DumpTo(&r, 1, 7, "u-1", "b.000001", 100);
  DumpTo(&r, 2, 7, "u-2", "b.000001", 200);
  absl::Status s = r.BeginDump(3, 7, "u-3");
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_EQ(s.message(),
            "2 replicas with server_id 7 (max_replica_uuids_per_server_id) are remembered "
            "already");
  EXPECT_EQ(r.size(), 2u);
  // A UUID remembered already, and another server id, need no room of 7's.
  EXPECT_TRUE(r.BeginDump(4, 7, "u-1").ok());
  EXPECT_TRUE(r.BeginDump(5, 8, "u-3").ok());
  EXPECT_TRUE(r.BeginDump(6, 6, "u-3").ok());
  RememberedReplica saved;
  saved.server_id = 7;
  saved.uuid = "u-4";
  saved.file = "b.000001";
  EXPECT_FALSE(r.Remember(saved));
  // Once 7/u-2 has expired, a new UUID fits.
  now_ += absl::Hours(1);
  EXPECT_TRUE(r.BeginDump(7, 7, "u-3").ok());
}

// An operator forgets a disconnected replica at once; one dumping is
// forgotten only once disconnected.
TEST_F(ReplicaRegistryTest, ForgetDropsADisconnectedReplicaAndMakesRoom) {
  ReplicaRegistry r(Options(2, absl::Hours(1)));
  DumpTo(&r, 1, 7, "u-1", "b.000001", 100);
  ASSERT_TRUE(r.BeginDump(2, 8, "").ok());
  r.NoteSent(2, 8, "", "b.000002", 200);
  EXPECT_TRUE(absl::IsNotFound(r.Forget(7, "u-2").status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(r.Forget(8, "").status()));
  EXPECT_TRUE(absl::IsResourceExhausted(r.BeginDump(3, 9, "")));
  auto gone = r.Forget(7, "u-1");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->file, "b.000001");
  EXPECT_EQ(gone->position, 100u);
  EXPECT_EQ(Ids(r), (std::vector<uint32_t>{8}));
  EXPECT_TRUE(r.BeginDump(3, 9, "").ok());
  // Its expiry entry went with it: nothing is returned for it later.
  r.EndDump(2, 8, "");
  now_ += absl::Hours(1);
  std::vector<RememberedReplica> expired = r.ForgetExpired();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].server_id, 8u);
}

TEST_F(ReplicaRegistryTest, ADisconnectedReplicaExpiresFromItsLastActivity) {
  ReplicaRegistry r(Options(10, absl::Hours(24)));
  DumpTo(&r, 1, 7, "", "b.000001", 100);
  now_ += absl::Hours(20);
  DumpTo(&r, 2, 8, "", "b.000002", 200);
  // A connected replica never expires.
  ASSERT_TRUE(r.BeginDump(3, 9, "").ok());
  r.NoteSent(3, 9, "", "b.000003", 4);
  now_ += absl::Hours(4);
  std::vector<RememberedReplica> gone = r.ForgetExpired();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].server_id, 7u);
  EXPECT_EQ(gone[0].file, "b.000001");
  EXPECT_EQ(Ids(r), (std::vector<uint32_t>{8, 9}));
  now_ += absl::Hours(1000);
  gone = r.ForgetExpired();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].server_id, 8u);
  EXPECT_EQ(Ids(r), (std::vector<uint32_t>{9}));
  // Its dump ends: from then on it ages.
  r.EndDump(3, 9, "");
  EXPECT_TRUE(r.ForgetExpired().empty());
  now_ += absl::Hours(24);
  EXPECT_EQ(r.ForgetExpired().size(), 1u);
}

TEST_F(ReplicaRegistryTest, ZeroExpiryRemembersForever) {
  ReplicaRegistry r(Options(10, absl::ZeroDuration()));
  DumpTo(&r, 1, 7, "", "b.000001", 100);
  now_ += absl::Hours(24 * 365 * 10);
  EXPECT_TRUE(r.ForgetExpired().empty());
  EXPECT_EQ(r.size(), 1u);
}

TEST_F(ReplicaRegistryTest, AnotherUuidUnderTheSameIdNeverMovesThePosition) {
  ReplicaRegistry r(Options(10, absl::Hours(24)));
  DumpTo(&r, 1, 7, "aaaa", "b.000001", 100);
  DumpTo(&r, 2, 7, "bbbb", "b.000009", 900);
  // No UUID is a UUID of its own ("" : the server id alone).
  DumpTo(&r, 3, 7, "", "b.000008", 800);
  std::vector<RememberedReplica> all = r.List();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].uuid, "");
  EXPECT_EQ(all[1].uuid, "aaaa");
  EXPECT_EQ(all[1].file, "b.000001");
  EXPECT_EQ(all[1].position, 100u);
  EXPECT_EQ(all[2].uuid, "bbbb");
  EXPECT_EQ(all[2].file, "b.000009");
  // The same UUID moves its own position, forward or back.
  DumpTo(&r, 4, 7, "aaaa", "b.000005", 4);
  EXPECT_EQ(r.List()[1].file, "b.000005");
}

TEST_F(ReplicaRegistryTest, OnlyTheLatestDumpOfAReplicaMovesIt) {
  ReplicaRegistry r(Options(10, absl::Hours(24)));
  ASSERT_TRUE(r.BeginDump(1, 7, "").ok());
  r.NoteSent(1, 7, "", "b.000001", 100);
  ASSERT_TRUE(r.BeginDump(2, 7, "").ok());  // the replica reconnected
  r.NoteSent(1, 7, "", "b.000004", 400);    // the old dump: ignored
  r.EndDump(1, 7, "");                      // ignored: 2 is dumping
  ASSERT_EQ(r.List().size(), 1u);
  EXPECT_TRUE(r.List()[0].connected);
  EXPECT_EQ(r.List()[0].file, "b.000001");
  r.NoteSent(2, 7, "", "b.000002", 200);
  r.EndDump(2, 7, "");
  EXPECT_FALSE(r.List()[0].connected);
  EXPECT_EQ(r.List()[0].file, "b.000002");
}

TEST_F(ReplicaRegistryTest, RememberRestoresWithinTheCapAndKeepsTheSavedActivity) {
  ReplicaRegistry r(Options(2, absl::Hours(24)));
  RememberedReplica a;
  a.server_id = 7;
  a.uuid = "aaaa";
  a.file = "b.000001";
  a.position = 100;
  a.last_active = now_ - absl::Hours(23);
  EXPECT_TRUE(r.Remember(a));
  EXPECT_FALSE(r.Remember(a));  // known
  RememberedReplica none = a;
  none.server_id = 8;
  none.file.clear();
  EXPECT_FALSE(r.Remember(none));  // no position: holds nothing
  RememberedReplica future = a;
  future.server_id = 9;
  future.last_active = now_ + absl::Hours(1000);  // clamped to now
  EXPECT_TRUE(r.Remember(future));
  RememberedReplica third = a;
  third.server_id = 10;
  EXPECT_FALSE(r.Remember(third));  // full
  now_ += absl::Hours(1);
  std::vector<RememberedReplica> gone = r.ForgetExpired();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].server_id, 7u);
  EXPECT_EQ(Ids(r), (std::vector<uint32_t>{9}));
}

TEST(ReplicaUuidKeyTest, AnythingButAPlainTokenIsHexEncoded) {
  EXPECT_EQ(ReplicaUuidKey(""), "");
  EXPECT_EQ(ReplicaUuidKey("3E11FA47-71ca-11e1-9e33-c80aa9429562"),
            "3E11FA47-71ca-11e1-9e33-c80aa9429562");
  EXPECT_EQ(ReplicaUuidKey("a b"), "x612062");
  EXPECT_EQ(ReplicaUuidKey("-"), "x2d");
  // A newline cannot forge a line where the key is written.
  EXPECT_EQ(ReplicaUuidKey("a\nreplica 1"), "x610a7265706c6963612031");
  // 65 letters: too long, the hex of the first 64 bytes.
  std::string hex;
  for (int i = 0; i < 64; ++i) hex += "61";
  EXPECT_EQ(ReplicaUuidKey(std::string(65, 'a')), "x" + hex);
}

}  // namespace
}  // namespace server
}  // namespace binlog
