"""The network by allow-list (issue 36): with `"sandbox_network": {"allow": [...]}` a confined
command reaches the allowed hosts, and nothing else, through the daemon's proxy. Real clients
(curl over HTTP and over CONNECT to a TLS server with its own CA, git over smart HTTP, pip
from a simple index) against servers on this machine, offline: names resolve through the
daemon's test resolver (AGENT_TEST_RESOLVE) and the proxy may reach one loopback port
(AGENT_TEST_PROXY_LOOPBACK_PORT), which the rebinding tests leave closed."""
import functools
import http.server
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import unittest
import zipfile

from harness import Env, tool_call
from test_auto_mode import needs_bwrap

NAMES = "pypi.test=127.0.0.1,files.pypi.test=127.0.0.1,evil.test=127.0.0.1,rebound.test=127.0.0.1"


class Handler(http.server.CGIHTTPRequestHandler):
    """Files, CGI under /cgi-bin, /redirect/<host:port/path> answering 302 to it, and /<name>
    answering <name>.json (an npm registry's package document)."""

    def do_GET(self):
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", "http://" + self.path[len("/redirect/"):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        # An npm registry's package document: /<name> answers <root>/<name>.json.
        doc = self.translate_path(self.path) + ".json"
        if "/" not in self.path[1:] and os.path.isfile(doc):
            with open(doc, "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


class Server:
    """A threaded HTTP server on 127.0.0.1 serving `root` (Handler), with TLS when given a
    certificate."""

    def __init__(self, root, cert=None):
        handler = functools.partial(Handler, directory=root)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if cert is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*cert)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


class NetworkByAllowList(unittest.TestCase):
    def setUp(self):
        needs_bwrap(self)
        for tool in ("curl", "git", "openssl"):
            if shutil.which(tool) is None:
                self.skipTest(tool + " is not installed")

    def world(self, allow, deny=(), loopback=True, cert=False):
        """An Env whose config allows `allow`, and a server of the files under self.root."""
        self.root = tempfile.mkdtemp(prefix="agt-www-")
        os.chmod(self.root, 0o755)  # CGI runs as nobody when the tests run as root
        self.addCleanup(shutil.rmtree, self.root, True)
        with open(os.path.join(self.root, "hello.txt"), "w") as f:
            f.write("HELLO FROM THE INDEX\n")
        pair = None
        if cert:
            pair = (os.path.join(self.root, "cert.pem"), os.path.join(self.root, "key.pem"))
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                            "1", "-subj", "/CN=pypi.test", "-addext",
                            "subjectAltName=DNS:pypi.test", "-keyout", pair[1], "-out", pair[0]],
                           check=True, capture_output=True)
        self.server = Server(self.root, pair)
        self.addCleanup(self.server.close)
        extra = {"AGENT_TEST_RESOLVE": NAMES}
        if loopback:
            extra["AGENT_TEST_PROXY_LOOPBACK_PORT"] = str(self.server.port)
        env = Env([], extra_env=extra)
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.dir, "config", "agent"), exist_ok=True)
        with open(os.path.join(env.dir, "config", "agent", "config.json"), "w") as f:
            json.dump({"sandbox_network": {"allow": list(allow), "deny": list(deny)}}, f)
        if cert:  # the client inside trusts the server's own CA, read from the project
            shutil.copy(pair[0], os.path.join(env.project, "ca.pem"))
        return env

    def sandbox(self, env, *argv):
        return env.agent("sandbox", "--", *argv, timeout=120)

    def test_curl_reaches_an_allowed_host_and_each_connection_is_shown(self):
        env = self.world(["pypi.test", "*.pypi.test"])
        url = "http://pypi.test:%d/hello.txt" % self.server.port
        r = self.sandbox(env, "curl", "-sS", url)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("HELLO FROM THE INDEX", r.stdout)
        self.assertIn("[network] allowed pypi.test:%d" % self.server.port, r.stdout)
        r = self.sandbox(env, "curl", "-sS",
                         "http://files.pypi.test:%d/hello.txt" % self.server.port)
        self.assertIn("HELLO FROM THE INDEX", r.stdout, r.stdout + r.stderr)
        # Only through the proxy: a direct connection finds an empty network.
        r = self.sandbox(env, "curl", "-sS", "--noproxy", "*", url)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("HELLO", r.stdout)

    def test_https_goes_through_connect_to_a_tls_server(self):
        env = self.world(["pypi.test"], cert=True)
        r = self.sandbox(env, "curl", "-sS", "--cacert", "ca.pem",
                         "https://pypi.test:%d/hello.txt" % self.server.port)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("HELLO FROM THE INDEX", r.stdout)

    def test_a_host_off_the_list_or_denied_is_refused_with_the_ways_on(self):
        env = self.world(["pypi.test", "*.pypi.test"], deny=["files.pypi.test"])
        for host, why in (("evil.test", "not on the allow list"),
                          ("files.pypi.test", "on the deny list")):
            r = self.sandbox(env, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}\n",
                             "http://%s:%d/hello.txt" % (host, self.server.port))
            self.assertIn("403", r.stdout, r.stdout + r.stderr)
            self.assertIn("[network] refused %s:%d (%s)" % (host, self.server.port, why),
                          r.stdout)
            self.assertIn("escalate: true", r.stdout)
            self.assertIn("ask the person to allow the domain", r.stdout)

    def test_an_allowed_name_that_resolves_to_loopback_reaches_nothing(self):
        env = self.world(["rebound.test"], loopback=False)
        r = self.sandbox(env, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}\n",
                         "http://rebound.test:%d/hello.txt" % self.server.port)
        self.assertIn("403", r.stdout, r.stdout + r.stderr)
        self.assertIn("resolves to 127.0.0.1", r.stdout)

    def test_a_redirect_to_a_refused_host_is_refused_at_its_own_hop(self):
        env = self.world(["pypi.test"])
        r = self.sandbox(env, "curl", "-sS", "-L", "-o", "/dev/null", "-w", "%{http_code}\n",
                         "http://pypi.test:%d/redirect/evil.test:%d/hello.txt"
                         % (self.server.port, self.server.port))
        self.assertIn("[network] allowed pypi.test", r.stdout, r.stdout + r.stderr)
        self.assertIn("[network] refused evil.test", r.stdout)
        self.assertNotIn("HELLO", r.stdout)

    def test_git_clones_over_smart_http(self):
        env = self.world(["pypi.test"])
        repo = os.path.join(self.root, "repo.git")
        work = os.path.join(self.root, "work")
        git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
        subprocess.run(git + ["init", "-q", "-b", "main", work], check=True)
        with open(os.path.join(work, "README"), "w") as f:
            f.write("cloned through the proxy\n")
        subprocess.run(git + ["-C", work, "add", "README"], check=True)
        subprocess.run(git + ["-C", work, "commit", "-qm", "one"], check=True)
        subprocess.run(["git", "clone", "-q", "--bare", work, repo], check=True)
        os.makedirs(os.path.join(self.root, "cgi-bin"))
        backend = os.path.join(self.root, "cgi-bin", "git")
        with open(backend, "w") as f:
            # The repository is the test's (another user's, under a root run's CGI).
            f.write("#!/bin/sh\nGIT_PROJECT_ROOT=%s GIT_HTTP_EXPORT_ALL=1 GIT_CONFIG_COUNT=1 "
                    "GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' exec "
                    "/usr/lib/git-core/git-http-backend\n" % self.root)
        os.chmod(backend, 0o755)
        r = self.sandbox(env, "git", "clone", "-q",
                         "http://pypi.test:%d/cgi-bin/git/repo.git" % self.server.port, "copy")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(env.project, "copy", "README")) as f:
            self.assertEqual(f.read(), "cloned through the proxy\n")

    def test_pip_downloads_from_a_simple_index(self):
        env = self.world(["pypi.test"])
        wheel = make_wheel(os.path.join(self.root, "files"))
        simple = os.path.join(self.root, "simple", "demo-pkg")
        os.makedirs(simple)
        with open(os.path.join(simple, "index.html"), "w") as f:
            f.write('<html><body><a href="/files/%s">%s</a></body></html>\n'
                    % (os.path.basename(wheel), os.path.basename(wheel)))
        r = self.sandbox(env, "/usr/bin/python3", "-m", "pip", "download", "--no-deps",
                         "--disable-pip-version-check", "--no-cache-dir", "-d", "wheels",
                         "--index-url", "http://pypi.test:%d/simple/" % self.server.port,
                         "--trusted-host", "pypi.test",
                         "demo-pkg")
        if "No module named pip" in r.stdout:
            self.skipTest("pip is not installed for /usr/bin/python3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.exists(os.path.join(env.project, "wheels",
                                                    os.path.basename(wheel))))

    def test_npm_installs_from_a_local_registry(self):
        if shutil.which("npm") is None:
            self.skipTest("npm is not installed")
        env = self.world(["pypi.test"])
        registry = "http://pypi.test:%d/" % self.server.port
        tgz = make_npm_package(self.root, registry)
        r = self.sandbox(env, "env", "npm_config_cache=/tmp/npm-cache", "npm", "install",
                         "--registry", registry, "--no-audit", "--no-fund",
                         "--no-update-notifier", "demo-pkg")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(env.project, "node_modules", "demo-pkg", "index.js")) as f:
            self.assertIn("installed through the proxy", f.read())
        self.assertIn("[network] allowed pypi.test:%d" % self.server.port, r.stdout)
        self.assertTrue(os.path.exists(tgz))

    def test_the_model_is_told_which_host_was_refused(self):
        env = self.world(["pypi.test"])
        env.load_script([
            {"tool_calls": [tool_call("bash", command="curl -sS http://evil.test:%d/x"
                                      % self.server.port)]},
            {"expect": {"last_message_contains": "sandbox network: refused evil.test"},
             "text": "done"},
        ])
        r = env.agent("--auto", "fetch it")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)


def make_npm_package(root, registry):
    """demo-pkg 1.0.0 as a registry serves it: its document at /demo-pkg, its tarball."""
    import hashlib
    import io
    import tarfile
    files = {"package/package.json": json.dumps({"name": "demo-pkg", "version": "1.0.0",
                                                 "main": "index.js"}),
             "package/index.js": "module.exports = 'installed through the proxy';\n"}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    tgz = os.path.join(root, "demo-pkg", "-", "demo-pkg-1.0.0.tgz")
    os.makedirs(os.path.dirname(tgz))
    with open(tgz, "wb") as f:
        f.write(buf.getvalue())
    doc = {"name": "demo-pkg", "dist-tags": {"latest": "1.0.0"},
           "versions": {"1.0.0": {"name": "demo-pkg", "version": "1.0.0", "main": "index.js",
                                  "dist": {"tarball": registry + "demo-pkg/-/demo-pkg-1.0.0.tgz",
                                           "shasum": hashlib.sha1(buf.getvalue()).hexdigest()}}}}
    with open(os.path.join(root, "demo-pkg.json"), "w") as f:
        json.dump(doc, f)
    return tgz


def make_wheel(directory):
    """A minimal valid wheel, demo_pkg 1.0."""
    os.makedirs(directory)
    path = os.path.join(directory, "demo_pkg-1.0-py3-none-any.whl")
    files = {
        "demo_pkg/__init__.py": "",
        "demo_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n",
        "demo_pkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: "
                                         "true\nTag: py3-none-any\n",
    }
    record = "".join("%s,,\n" % name for name in files) + "demo_pkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("demo_pkg-1.0.dist-info/RECORD", record)
    return path


if __name__ == "__main__":
    unittest.main()
