"""The edge (deploy/nginx.conf) run in a real nginx in front of real service processes."""
