"""graphsval plugin: NVIDIA Jetson Orin targets (Nano, NX, AGX) in their Super/MAXN modes."""
