/* bcryptprimitives.dll for Wine 8.0, which lacks it: Go >= 1.24 takes its
 * random numbers from ProcessPrng there and will not start without it.
 * Built and installed into a Wine prefix by scripts/wine/prefix.sh. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	return RtlGenRandom(data, (ULONG)len);
}
