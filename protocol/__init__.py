"""What the coordinator, the agents and the sidecars all speak (see protocol/CMakeLists.txt)."""
