#include "daemon/sandbox/proxy_request.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"

namespace agent::daemon::sandbox {
namespace {

using ::agent::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProxyRequestTest, AConnectIsATunnelToHostAndPort) {
  absl::StatusOr<ProxyRequest> r =
      ParseRequest("CONNECT Registry.NPMJS.org.:443 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->tunnel);
  EXPECT_EQ(r->method, "CONNECT");
  EXPECT_EQ(r->version, "HTTP/1.1");
  EXPECT_EQ(r->host, "registry.npmjs.org");  // canonical: what the lists are checked against
  EXPECT_EQ(r->port, 443);
}

TEST(ProxyRequestTest, AConnectToAnIpv6Literal) {
  absl::StatusOr<ProxyRequest> r = ParseRequest("CONNECT [2606:4700::1111]:443 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->host, "2606:4700::1111");
  EXPECT_EQ(r->port, 443);
}

TEST(ProxyRequestTest, APlainRequestTakesItsHostPortAndPathFromTheUrl) {
  absl::StatusOr<ProxyRequest> r =
      ParseRequest("GET http://Example.com:8080/a/b?q=1 HTTP/1.0\r\nAccept: */*\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->tunnel);
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->version, "HTTP/1.0");
  EXPECT_EQ(r->host, "example.com");
  EXPECT_EQ(r->port, 8080);
  EXPECT_EQ(r->path, "/a/b?q=1");
}

TEST(ProxyRequestTest, APlainRequestDefaultsToPort80AndPathSlash) {
  absl::StatusOr<ProxyRequest> r = ParseRequest("HEAD http://example.com HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->port, 80);
  EXPECT_EQ(r->path, "/");
  r = ParseRequest("POST http://[::1]/x HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->host, "::1");
  EXPECT_EQ(r->port, 80);
}

TEST(ProxyRequestTest, WhatIsNotAProxyRequestLineIsRefused) {
  for (const char* head : {
           "", "\r\n\r\n",
           "GET http://example.com/\r\n\r\n",                 // no version
           "GET http://example.com/ HTTP/2\r\n\r\n",          // not HTTP/1.x
           "GET  http://example.com/ HTTP/1.1\r\n\r\n",       // two spaces
           "GET http://example.com/ HTTP/1.1 extra\r\n\r\n",  // four words
       }) {
    EXPECT_THAT(ParseRequest(head), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("not an HTTP/1.1 proxy request")))
        << head;
  }
}

TEST(ProxyRequestTest, OnlyHttpUrlsAndConnect) {
  for (const char* head : {"GET https://example.com/ HTTP/1.1\r\n\r\n",
                           "GET /origin-form HTTP/1.1\r\nHost: example.com\r\n\r\n",
                           "GET ftp://example.com/ HTTP/1.1\r\n\r\n"}) {
    EXPECT_THAT(ParseRequest(head),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("only http:// URLs")))
        << head;
  }
}

TEST(ProxyRequestTest, ATargetThatIsNotACanonicalHostAndPortIsRefused) {
  for (const char* head : {
           "CONNECT example.com HTTP/1.1\r\n\r\n",  // a tunnel needs its port
           "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
           "CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
           "CONNECT example.com:https HTTP/1.1\r\n\r\n",
           "CONNECT :443 HTTP/1.1\r\n\r\n",
           "CONNECT [::1 HTTP/1.1\r\n\r\n",
           "CONNECT [::1]443 HTTP/1.1\r\n\r\n",
           "CONNECT [::1] HTTP/1.1\r\n\r\n",
           "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",  // userinfo: whose host?
           "GET http://evil.com%2f@good.com/ HTTP/1.1\r\n\r\n",
           "GET http:///path HTTP/1.1\r\n\r\n",
           "GET http://example.com:99999/ HTTP/1.1\r\n\r\n",
       }) {
    EXPECT_THAT(ParseRequest(head), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("the target is not host:port")))
        << head;
  }
}

TEST(ProxyRequestTest, TheOriginGetsOriginFormAndTheHostThatWasChecked) {
  const std::string head =
      "GET http://example.com/pkg?v=2 HTTP/1.1\r\n"
      "Host: other-site-on-the-same-cdn.com\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "proxy-authorization: Basic c2VjcmV0\r\n"
      "Connection: keep-alive\r\n"
      "Keep-Alive: timeout=5\r\n"
      "User-Agent: pip/24\r\n"
      "X-Hostname: kept\r\n"
      "Accept: */*\r\n"
      "\r\n";
  absl::StatusOr<ProxyRequest> r = ParseRequest(head);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OriginHead(*r, head),
            "GET /pkg?v=2 HTTP/1.1\r\n"
            "User-Agent: pip/24\r\n"
            "X-Hostname: kept\r\n"
            "Accept: */*\r\n"
            "Host: example.com\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(ProxyRequestTest, TheOriginHostHeaderCarriesANonDefaultPort) {
  const std::string head = "PUT http://[2001:DB8::1]:8080/x HTTP/1.1\r\nHOST: evil.com\r\n\r\n";
  absl::StatusOr<ProxyRequest> r = ParseRequest(head);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string out = OriginHead(*r, head);
  EXPECT_EQ(out, "PUT /x HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(out, Not(HasSubstr("evil.com")));
}

TEST(ProxyRequestTest, ABareLineEndOrANulAnywhereInTheHeadIsRefused) {
  // Behind a bare LF an origin may read a second Host that no rule checked.
  for (const std::string& head : {
           std::string(
               "GET http://allowed.example/ HTTP/1.1\r\nX-A: 1\nHost: evil.example\r\n\r\n"),
           std::string("GET http://allowed.example/x\nHost:evil.example HTTP/1.1\r\n\r\n"),
           std::string("GET http://allowed.example/ HTTP/1.1\r\nX-A: 1\rHost: evil\r\n\r\n"),
           std::string("GET http://allowed.example/ HTTP/1.1\r\nX-A: 1\0\r\n\r\n", 49),
       }) {
    EXPECT_THAT(ParseRequest(head), StatusIs(absl::StatusCode::kInvalidArgument)) << head;
  }
  EXPECT_TRUE(ParseRequest("GET http://allowed.example/ HTTP/1.1\r\nX-A: 1\r\n\r\n").ok());
}

TEST(ProxyRequestTest, HostHeaderBracketsIpv6AndOmitsPort80) {
  EXPECT_EQ(HostHeader("example.com", 80), "example.com");
  EXPECT_EQ(HostHeader("example.com", 443), "example.com:443");
  EXPECT_EQ(HostHeader("::1", 80), "[::1]");
  EXPECT_EQ(HostHeader("2001:db8::1", 8443), "[2001:db8::1]:8443");
  EXPECT_EQ(HostHeader("10.0.0.1", 8080), "10.0.0.1:8080");
}

}  // namespace
}  // namespace agent::daemon::sandbox
