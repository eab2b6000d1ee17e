"""What the coordinator, the agents and the judges all speak (see protocol/CMakeLists.txt)."""
