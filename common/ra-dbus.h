/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The names of radaemon's D-Bus API (daemon/org.radaemon.ReadAhead1.xml),
 * shared by the daemon and racontrol.
 */

#define RA_BUS_NAME "org.radaemon.ReadAhead1"
#define RA_BUS_PATH "/org/radaemon/ReadAhead1"
#define RA_BUS_DEVICE_PREFIX RA_BUS_PATH "/device"
#define RA_BUS_MANAGER_INTERFACE "org.radaemon.ReadAhead1.Manager"
#define RA_BUS_DEVICE_INTERFACE "org.radaemon.ReadAhead1.Device"
#define RA_BUS_SWAP_PATH RA_BUS_PATH "/swap"
#define RA_BUS_SWAP_INTERFACE "org.radaemon.ReadAhead1.Swap"
#define RA_BUS_ERROR_NO_SUCH_DEVICE "org.radaemon.ReadAhead1.Error.NoSuchDevice"
#define RA_BUS_ERROR_INVALID_VALUE "org.radaemon.ReadAhead1.Error.InvalidValue"
#define RA_BUS_ERROR_BUSY "org.radaemon.ReadAhead1.Error.Busy"
#define RA_POLKIT_ACTION "org.radaemon.ReadAhead1.manage"
