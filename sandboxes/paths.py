"""The files a sandbox runs, which ship beside this module: each backend starts them, the image copies them in."""

from pathlib import Path

RUNTIME_SERVER = Path(__file__).with_name("runtime_server.py")  # the MCP server of any bundle
CONFINE = Path(__file__).with_name("confine.py")  # the launcher that caps and reaps a sandbox's processes
ENTER = Path(__file__).with_name("enter.py")  # the last step into a bwrap sandbox
DOCKERFILE = Path(__file__).with_name("Dockerfile")  # the sandbox image's recipe, for `docker build`
