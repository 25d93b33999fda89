"""Offline checks of deploy/ (ctest label deploy): one concept per module.

  schema      every rendered object against the Kubernetes OpenAPI schemas (kubernetes-validate)
  semantics   what lmtrain needs of its manifests beyond the schemas
  dockerfile  static checks of deploy/docker/*.Dockerfile
  flags       the flags lm-server / lm-worker accept
  yaml12      a YAML 1.2 loader (the core schema: what kubectl and the programs read)
  values      small helpers for loosely typed YAML values
"""
