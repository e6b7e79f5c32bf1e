/* The runtime's configuration file (oci/sysconfig.c, docs/security.md
 * "Runtime defaults"). */
#ifndef SANDLOCK_OCI_SYSCONFIG_H
#define SANDLOCK_OCI_SYSCONFIG_H

#include <stdbool.h>

#include "common/err.h"

/* Reads |path| and sets the confinement defaults it names (rank 1, below
 * the global flags and the annotations).  A missing file is fine unless
 * |required|.  Errors name the file and the key. */
int oci_sysconfig_load (const char *path, bool required, struct cm_err **err);

/* The file to read when no --sandlock-config is given, malloc'd:
 * $SANDLOCK_OCI_CONFIG_DIR (default /etc/sandlock-oci) /config.json, or
 * /NAME.json (*required) when the binary runs as sandlock-oci-NAME. */
char *oci_sysconfig_path (const char *argv0, bool *required);

/* The global options (NULL when not given). */
struct oci_sysconfig_flags
{
  const char *config;           /* --sandlock-config FILE */
  const char *disable;          /* --sandlock-disable LIST */
  const char *degrade;          /* --sandlock-degrade LIST */
};

/* main(): reads the config file (--sandlock-config, else the default
 * path), then applies the flags over it. */
int oci_sysconfig_apply (const char *argv0,
                         const struct oci_sysconfig_flags *f,
                         struct cm_err **err);

#endif
