"""A stand-in of the Hugging Face Hub's HTTP API for tests: a real HTTP server on 127.0.0.1 that answers
the requests `huggingface_hub.HfApi` makes to say whose token it is (whoami), create a dataset repository,
validate a card, commit files, list refs and tag a revision, and those `hf download` makes (repository info,
its file tree, each file), so that the official SDK and CLI run against it unchanged (only HF_ENDPOINT and the
token differ).

This is a TEST FIXTURE, never something users run. It keeps repositories in memory: each commit is the
whole file tree after it, tags point at commits. Every file is asked for as a "regular" upload (sent
inline, base64, in the commit), which the real Hub may also answer; LFS and Xet transfers are not
spoken here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import yaml


@dataclass
class Commit:
    oid: str
    summary: str
    files: dict[str, bytes]


@dataclass
class Repo:
    private: bool
    commits: list[Commit] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)

    def at(self, revision: str) -> Commit | None:
        if revision == "main":
            return self.commits[-1] if self.commits else None
        oid = self.tags.get(revision, revision)
        return next((c for c in self.commits if c.oid == oid), None)


_REPO_ROUTE = re.compile(r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/(?P<action>preupload|commit|tag)/(?P<revision>[^/?]+)")
_READ_ROUTE = re.compile(r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/(?P<action>revision|tree)/(?P<revision>[^/?]+)"
                         r"(?:/[^?]*)?(?:\?.*)?$")
_FILE_ROUTE = re.compile(r"^/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<revision>[^/]+)/(?P<path>[^?]+)")


@dataclass
class File:
    """A file's bytes as a reply (to GET or HEAD /datasets/<repo>/resolve/<revision>/<path>)."""

    data: bytes
    commit: str


class StandInHub:
    """Start with `with StandInHub(token) as hub:`; `hub.endpoint` goes into HF_ENDPOINT. The token is `user`'s,
    with `role` (write or read), and the user belongs to `orgs` (organisation -> roleInOrg); with `refuse_writes`
    creating a repository is refused (403), as for a token whose scopes whoami does not show."""

    def __init__(self, token: str = "hf_standin", user: str = "lab-member", role: str = "write",
                 orgs: dict[str, str] | None = None, refuse_writes: bool = False) -> None:
        self.token = token
        self.refuse_writes = refuse_writes  # as for a fine-grained token whose scopes whoami does not show
        self.user = user
        self.role = role
        self.orgs = {"lab": "write"} if orgs is None else orgs
        self.repos: dict[str, Repo] = {}
        self.requests: list[str] = []
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._reply("GET", b"")

            def do_HEAD(self) -> None:
                self._reply("HEAD", b"")

            def do_POST(self) -> None:
                self._reply("POST", self.rfile.read(int(self.headers.get("Content-Length", "0"))))

            def _reply(self, method: str, body: bytes) -> None:
                with hub._lock:
                    hub.requests.append(f"{method} {self.path}")
                    status, reply = hub._answer(method, self.path, self.headers.get("Authorization", ""), body)
                data = reply.data if isinstance(reply, File) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if isinstance(reply, File)
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                if isinstance(reply, File):
                    self.send_header("X-Repo-Commit", reply.commit)
                    self.send_header("ETag", f'"{_blob_id(reply.data)}"')
                self.end_headers()
                if method != "HEAD":
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="standin-hub", daemon=True)

    def __enter__(self) -> StandInHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, method: str, path: str, authorization: str, body: bytes) -> tuple[int, Any]:
        if authorization != f"Bearer {self.token}":
            return 401, {"error": "Invalid credentials in Authorization header"}
        if method == "GET" and path == "/api/whoami-v2":
            return 200, {"type": "user", "name": self.user,
                         "orgs": [{"name": org, "roleInOrg": role} for org, role in self.orgs.items()],
                         "auth": {"type": "access_token", "accessToken": {"displayName": "standin", "role": self.role}}}
        if method in ("GET", "HEAD") and (read := _READ_ROUTE.match(path) or _FILE_ROUTE.match(path)):
            return self._read(read)
        refs = re.match(r"^/api/datasets/([^/]+/[^/?]+)/refs(\?.*)?$", path)
        if method == "GET" and refs:
            if (known := self.repos.get(refs[1])) is None:
                return 404, {"error": "Repository not found"}
            main = [{"name": "main", "ref": "refs/heads/main", "targetCommit": known.commits[-1].oid}] if known.commits else []
            return 200, {"branches": main, "converts": [], "tags": [
                {"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": oid} for tag, oid in known.tags.items()]}
        if method != "POST":
            return 404, {"error": f"the stand-in Hub does not answer {method} {path}"}
        if path == "/api/repos/create" and self.refuse_writes:
            return 403, {"error": "You don't have the rights to create a dataset under this namespace"}
        if path == "/api/repos/create":
            request = json.loads(body)
            if request.get("type") != "dataset":
                return 400, {"error": "this stand-in holds dataset repositories only"}
            repo_id = f"{request['organization']}/{request['name']}" if request.get("organization") else request["name"]
            if repo_id in self.repos:
                return 409, {"error": "You already created this dataset repo", "url": self._url(repo_id)}
            self.repos[repo_id] = Repo(private=request.get("visibility") == "private" or bool(request.get("private")))
            return 200, {"url": self._url(repo_id)}
        if path == "/api/validate-yaml":
            return self._validate_card(json.loads(body)["content"])
        route = _REPO_ROUTE.match(path)
        if route is None:
            return 404, {"error": f"the stand-in Hub does not answer {path}"}
        repo = self.repos.get(route["repo"])
        if repo is None:
            return 404, {"error": "Repository not found"}
        if route["action"] == "preupload":
            files = json.loads(body)["files"]
            return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                                   for f in files]}
        if route["action"] == "commit":
            return self._commit(route["repo"], repo, route["revision"], body)
        target = repo.at(route["revision"])
        tag = json.loads(body)["tag"]
        if target is None:
            return 404, {"error": "Revision not found"}
        if tag in repo.tags:
            return 409, {"error": f"Tag {tag} already exists"}
        repo.tags[tag] = target.oid
        return 200, {}

    def _commit(self, repo_id: str, repo: Repo, revision: str, body: bytes) -> tuple[int, dict[str, Any]]:
        if revision != "main":
            return 400, {"error": "the stand-in commits to main only"}
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = next(line["value"] for line in lines if line["key"] == "header")
        files = dict(repo.commits[-1].files) if repo.commits else {}
        for line in lines:
            if line["key"] == "file":
                files[line["value"]["path"]] = base64.b64decode(line["value"]["content"])
            elif line["key"] == "deletedFile":
                files.pop(line["value"]["path"], None)
            elif line["key"] != "header":
                return 400, {"error": f"the stand-in does not take {line['key']} operations"}
        oid = hashlib.sha1(json.dumps([header["summary"], len(repo.commits), sorted(files)]).encode()).hexdigest()
        repo.commits.append(Commit(oid=oid, summary=header["summary"], files=files))
        return 200, {"commitUrl": f"{self._url(repo_id)}/commit/{oid}", "commitOid": oid}

    def _read(self, route: re.Match[str]) -> tuple[int, Any]:
        """Repository info, its tree (recursive, one page) or one file, at a revision (main, a tag or a commit)."""
        repo = self.repos.get(route["repo"])
        commit = repo.at(route["revision"]) if repo is not None else None
        if repo is None or commit is None:
            return 404, {"error": "Repository not found" if repo is None else "Revision not found"}
        if "path" in route.groupdict():
            data = commit.files.get(route["path"])
            return (200, File(data=data, commit=commit.oid)) if data is not None else (404, {"error": "Entry not found"})
        if route["action"] == "tree":
            return 200, [{"type": "file", "path": name, "size": len(data), "oid": _blob_id(data)}
                         for name, data in sorted(commit.files.items())]
        return 200, {"id": route["repo"], "sha": commit.oid, "private": repo.private,
                     "siblings": [{"rfilename": name} for name in sorted(commit.files)]}

    @staticmethod
    def _validate_card(content: str) -> tuple[int, dict[str, Any]]:
        match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
        try:
            metadata = yaml.safe_load(match[1]) if match else None
        except yaml.YAMLError as exc:
            return 400, {"errors": [{"message": f"YAML: {exc}"}], "warnings": []}
        if not isinstance(metadata, dict):
            return 400, {"errors": [{"message": "no YAML metadata block"}], "warnings": []}
        return 200, {"errors": [], "warnings": []}

    def _url(self, repo_id: str) -> str:
        return f"{self.endpoint}/datasets/{repo_id}"


def _blob_id(data: bytes) -> str:
    """A file's git blob id, as the Hub gives it."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
