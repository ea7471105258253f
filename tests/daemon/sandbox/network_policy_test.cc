// The pure half of the network allow-list: canonical names, patterns, lists and addresses.
// The proxy that applies them is network_proxy_test.cc's.
#include "daemon/sandbox/network_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <initializer_list>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"

namespace agent::daemon::sandbox {
namespace {

using ::agent::testing::StatusIs;
using ::testing::HasSubstr;

TEST(CanonicalHostTest, LowerCaseWithoutTrailingDotOrBrackets) {
  EXPECT_EQ(*CanonicalHost("GitHub.COM"), "github.com");
  EXPECT_EQ(*CanonicalHost("example.org."), "example.org");
  EXPECT_EQ(*CanonicalHost("[2001:DB8::1]"), "2001:db8::1");
  EXPECT_EQ(*CanonicalHost("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(*CanonicalHost("my_host-1.internal"), "my_host-1.internal");
  EXPECT_EQ(*CanonicalHost(std::string(253, 'a')), std::string(253, 'a'));
}

TEST(CanonicalHostTest, RefusesWhatIsNoHostName) {
  for (const std::string& bad : std::initializer_list<std::string>{
           "", ".", "[]", std::string(254, 'a'), "a b.com", "evil.com/x", "user@evil.com",
           "evil.com%00", "a\x01.com", "caf\xC3\xA9.com", "[::1", "*.example.com",
           "host\r\nX: y"}) {
    EXPECT_THAT(CanonicalHost(bad), StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
  }
}

TEST(HostPatternTest, ParsesNameSubdomainsAndPort) {
  absl::StatusOr<HostPattern> exact = ParseHostPattern("Registry.NPMJS.org.");
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->name, "registry.npmjs.org");
  EXPECT_FALSE(exact->subdomains);
  EXPECT_EQ(exact->port, 0);

  absl::StatusOr<HostPattern> wild = ParseHostPattern("*.pypi.org:443");
  ASSERT_TRUE(wild.ok()) << wild.status();
  EXPECT_EQ(wild->name, "pypi.org");
  EXPECT_TRUE(wild->subdomains);
  EXPECT_EQ(wild->port, 443);

  absl::StatusOr<HostPattern> address = ParseHostPattern("93.184.216.34:8080");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->name, "93.184.216.34");
  EXPECT_EQ(address->port, 8080);
}

TEST(HostPatternTest, RefusesWhatIsNoPatternAndNamesIt) {
  for (const char* bad :
       {"", "*", "*.", "*.com.*", "a.*.com", "https://github.com", "github.com/org",
        "github.com:", "github.com:0", "github.com:65536", "github.com:https", "github.com:80:80",
        "localhost", "*.com", "*.com:443x", "[::1]:443", "exa mple.com"}) {
    EXPECT_THAT(ParseHostPattern(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not a host pattern")))
        << bad;
  }
  EXPECT_THAT(ParseHostPattern("https://github.com"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"https://github.com\"")));
}

TEST(NetworkRulesTest, TheFirstBadPatternIsTheError) {
  absl::StatusOr<NetworkRules> rules = ParseNetworkRules({"ok.com", "bad/one"}, {"alsobad:"});
  EXPECT_THAT(rules, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad/one")));
  rules = ParseNetworkRules({"ok.com"}, {"deny.com", "bad deny"});
  EXPECT_THAT(rules, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad deny")));
  rules = ParseNetworkRules({}, {});
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(rules->allow.empty());
  EXPECT_TRUE(rules->deny.empty());
}

TEST(NetworkRulesTest, EmptyListsAllowNothing) {
  HostVerdict v = DecideHost(NetworkRules{}, "github.com", 443);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, "not on the allow list");
}

TEST(NetworkRulesTest, DenyWinsOverAllowEvenForTheSameHost) {
  absl::StatusOr<NetworkRules> rules =
      ParseNetworkRules({"*.example.com", "api.example.com"}, {"api.example.com:443"});
  ASSERT_TRUE(rules.ok()) << rules.status();
  HostVerdict v = DecideHost(*rules, "api.example.com", 443);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, "on the deny list");
  EXPECT_TRUE(DecideHost(*rules, "api.example.com", 80).allowed);  // the deny names port 443
  EXPECT_TRUE(DecideHost(*rules, "www.example.com", 443).allowed);
  EXPECT_TRUE(DecideHost(*rules, "a.b.example.com", 443).allowed);  // any depth
  EXPECT_FALSE(DecideHost(*rules, "example.com", 443).allowed);
  EXPECT_FALSE(DecideHost(*rules, "badexample.com", 443).allowed);
  EXPECT_FALSE(DecideHost(*rules, "example.com.evil.net", 443).allowed);
}

sockaddr_storage V4(const char* text) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in*>(&s);
  a->sin_family = AF_INET;
  EXPECT_EQ(::inet_pton(AF_INET, text, &a->sin_addr), 1) << text;
  return s;
}

sockaddr_storage V6(const char* text) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in6*>(&s);
  a->sin6_family = AF_INET6;
  EXPECT_EQ(::inet_pton(AF_INET6, text, &a->sin6_addr), 1) << text;
  return s;
}

bool Public(const sockaddr_storage& s) {
  return IsPublicAddress(reinterpret_cast<const sockaddr*>(&s));
}

// The edges of each range: the first and last address in it are refused, the neighbours
// outside it are not (network_proxy_test.cc checks an address inside each).
TEST(IsPublicAddressTest, RangeEdgesV4) {
  for (const char* local : {"0.255.255.255", "10.255.255.255", "100.64.0.0", "100.127.255.255",
                            "127.255.255.255", "169.254.0.0", "172.31.255.255", "192.0.0.255",
                            "192.0.2.255", "192.168.255.255", "198.18.0.0", "198.19.255.255",
                            "198.51.100.7", "203.0.113.7", "239.255.255.255", "240.0.0.1"}) {
    EXPECT_FALSE(Public(V4(local))) << local;
  }
  for (const char* pub :
       {"1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "128.0.0.1",
        "169.253.255.255", "172.15.255.255", "192.0.1.1", "192.167.255.255", "192.169.0.0",
        "198.17.255.255", "198.20.0.0", "223.255.255.255"}) {
    EXPECT_TRUE(Public(V4(pub))) << pub;
  }
}

TEST(IsPublicAddressTest, OnlyGlobalUnicastV6AndWhatItCarries) {
  for (const char* local :
       {"::2", "::127.0.0.1", "fe80::", "febf::1", "fdff::1", "ff00::", "2001:db8:ffff::1",
        "::ffff:192.168.0.1", "::ffff:100.64.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
        "fec0::1" /* old site-local */, "4000::1", "1000::1" /* outside 2000::/3 */}) {
    EXPECT_FALSE(Public(V6(local))) << local;
  }
  for (const char* pub :
       {"2001:4860:4860::8888", "3fff::1", "64:ff9b::808:808", "::ffff:8.8.8.8"}) {
    EXPECT_TRUE(Public(V6(pub))) << pub;
  }
}

TEST(IsPublicAddressTest, OtherFamiliesAreRefused) {
  sockaddr_storage s{};
  s.ss_family = AF_UNIX;
  EXPECT_FALSE(Public(s));
  s.ss_family = AF_UNSPEC;
  EXPECT_FALSE(Public(s));
}

}  // namespace
}  // namespace agent::daemon::sandbox
