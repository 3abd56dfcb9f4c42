package jumpbackanchor_test

// Figures printed by hash4j's ConsistentHashing.jumpBackAnchorHash(
// PseudoRandomGeneratorProvider.splitMix64_V1()) (github.com/dynatrace-oss/
// hash4j, the implementation the algorithm was published in, run under Java
// 17): bucket numbers it returned and digests of its getBucket over fixed
// key hashes (see TestHash4j).

// hash4jHistory is a random history of 150 steps on an empty bucket set:
// "+b" is addBucket returning b, "-b" is removeBucket(b). It empties the
// set and starts again several times, and removes the last bucket both
// with and without removed buckets below it.
const hash4jHistory = "" +
	"+0 +1 -0 -1 +0 -0 +0 +1 +2 +3 +4 +5 -2 +2 +6 -1 +1 -3 +3 -5 -6 +6 +5 +7 +8 " +
	"-3 -1 -2 +2 -0 -7 +7 +0 +1 +3 -8 +8 +9 +10 -9 +9 -10 -8 +8 +10 -8 -10 -0 -3 -4 " +
	"-1 +1 +4 -4 -9 +9 +4 +3 +0 +10 -0 +0 -10 -1 +1 -1 +1 -4 +4 -5 +5 -6 -3 +3 -5 " +
	"+5 +6 +10 -5 +5 +8 +11 -8 -11 +11 +8 -6 +6 -11 +11 +12 -2 -10 +10 +2 +13 +14 +15 +16 +17 " +
	"+18 -4 +4 +19 +20 -14 +14 +21 +22 -18 +18 +23 +24 +25 -10 +10 +26 -7 -10 -24 -18 +18 +24 +10 -2 " +
	"-13 -19 -21 +21 -14 -16 +16 -9 +9 +14 -1 +1 +19 +13 -5 -22 +22 -9 +9 -9 +9 -4 +4 +5 -17"

// hash4jHistoryDigests are the digests of 200 key hashes after each step
// of hash4jHistory, 0 while the set is empty.
var hash4jHistoryDigests = []uint64{
	0x0000000000000000, 0xbed5230741fc1cb7, 0x938fd1c10ad85c80, 0x0000000000000000,
	0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0xbed5230741fc1cb7,
	0xa9e2776a7839b1b8, 0xab8fd891e86a257c, 0xaf37210793b19c48, 0x1eaeb426a83b3a68,
	0xaa76e95b01a7b864, 0x1eaeb426a83b3a68, 0x56ed9f9aa930fab0, 0x0039be4b2c6fc0eb,
	0x56ed9f9aa930fab0, 0xcf9addc5a4c87a93, 0x56ed9f9aa930fab0, 0x098fb0603388321a,
	0x156632a91f297a66, 0x098fb0603388321a, 0x56ed9f9aa930fab0, 0x2cb2ba618619a2dc,
	0xea62e4c855fd66a9, 0xfede15fd06589ea8, 0x6b8638924801cb19, 0x29cb41ce3164b917,
	0x6b8638924801cb19, 0x3f9f1413b367cb98, 0xccb334c8f592801a, 0x3f9f1413b367cb98,
	0x6b8638924801cb19, 0xfede15fd06589ea8, 0xea62e4c855fd66a9, 0x2cb2ba618619a2dc,
	0xea62e4c855fd66a9, 0xe82cb1d5a17824c7, 0x819e6529de945636, 0x541008bed9ab474a,
	0x819e6529de945636, 0xe82cb1d5a17824c7, 0xb20ddbb36f333861, 0xe82cb1d5a17824c7,
	0x819e6529de945636, 0xddc9302592cd06f2, 0xe53b20a1e86dfc1f, 0xbd862123a385d155,
	0x2e69b724e3b352a3, 0x0a85e8773d39e419, 0xc88ad732b9543ce0, 0x0a85e8773d39e419,
	0x2e69b724e3b352a3, 0x0a85e8773d39e419, 0x2536100612cbdf87, 0x0a85e8773d39e419,
	0x2e69b724e3b352a3, 0xbd862123a385d155, 0xe53b20a1e86dfc1f, 0xddc9302592cd06f2,
	0xcfcbf024cffb4943, 0xddc9302592cd06f2, 0xe53b20a1e86dfc1f, 0xf31b120e77e36f7f,
	0xe53b20a1e86dfc1f, 0xf31b120e77e36f7f, 0xe53b20a1e86dfc1f, 0x683340bbb8c3aade,
	0xe53b20a1e86dfc1f, 0x31f5171992687fa0, 0xe53b20a1e86dfc1f, 0xc9f62fed54ed1cc5,
	0xfc69d05b62d70704, 0xc9f62fed54ed1cc5, 0xcea6f352c9d3df60, 0xc9f62fed54ed1cc5,
	0xe53b20a1e86dfc1f, 0xddc9302592cd06f2, 0xb08a17c7091bdaf1, 0xddc9302592cd06f2,
	0x819e6529de945636, 0xcf7fe74fac5d5945, 0x4dc13cf6e85bf0c4, 0x3232eb00bf73bf25,
	0x4dc13cf6e85bf0c4, 0xcf7fe74fac5d5945, 0x75f374650b324e20, 0xcf7fe74fac5d5945,
	0x819e6529de945636, 0xcf7fe74fac5d5945, 0x039ebd6df6e65941, 0x4ae9b7d1111d94ad,
	0xc0a1edd3aea3dcc8, 0x4ae9b7d1111d94ad, 0x039ebd6df6e65941, 0xff54e2e96fed1e23,
	0x1677889c44f22155, 0x8e5743c3e36c9726, 0xd116232899332132, 0xdc01bca1133ac164,
	0x6ae23a33b4ee921f, 0x57390edd48741ce1, 0x6ae23a33b4ee921f, 0xcfd84e808f077a0c,
	0x5e40192252accb9d, 0x98a6b5fcbec50230, 0x5e40192252accb9d, 0xb0c4bf75488ab170,
	0x3797308d4cbe4c7c, 0x83b37666ef1856fd, 0x3797308d4cbe4c7c, 0x660b151aa7c2f908,
	0x1e451cb0ab4dba22, 0x6571d4f73100c8f9, 0x8c5facda35a639c7, 0x6571d4f73100c8f9,
	0x0a9261a0380edc64, 0x453ddf62c5e0172f, 0x6c2bb745ca8587fd, 0xa26461430f343cfe,
	0x61ce1b3f86205e27, 0xa26461430f343cfe, 0x6c2bb745ca8587fd, 0x453ddf62c5e0172f,
	0x3330d02637aa7c56, 0x769f619c0e09db01, 0xab49eb3b1a71a3ea, 0x3b3e1e2b99806986,
	0xab49eb3b1a71a3ea, 0xbdd5ab768eb727ca, 0xe0dcb20c75d3a4a1, 0xbdd5ab768eb727ca,
	0xc876c6721cf6b2c6, 0xbdd5ab768eb727ca, 0xab49eb3b1a71a3ea, 0x20aa2be540cd947d,
	0xab49eb3b1a71a3ea, 0x769f619c0e09db01, 0x3330d02637aa7c56, 0x3e70d92b84f64e5f,
	0xd10331f0841081d2, 0x3e70d92b84f64e5f, 0x605d639062f992ae, 0x3e70d92b84f64e5f,
	0x605d639062f992ae, 0x3e70d92b84f64e5f, 0xc1d2363f5b7cfb4c, 0x3e70d92b84f64e5f,
	0x3330d02637aa7c56, 0x08a7078a71d3ad04,
}

// hash4jRemoved are the buckets removed, in this order, from a set of 300
// (buckets 0..299 added in turn); hash4jAdded the buckets that 50 adds
// then returned.
var hash4jRemoved = []int{
	156, 173, 22, 96, 267, 182, 119, 84, 213, 68, 210, 108, 253, 195, 147,
	209, 18, 87, 37, 104, 111, 228, 154, 177, 57, 26, 115, 256, 183, 176,
	92, 186, 109, 163, 56, 174, 75, 141, 201, 45, 124, 200, 212, 250, 215,
	161, 242, 149, 143, 29, 179, 274, 146, 293, 273, 197, 32, 98, 227, 0,
	72, 193, 130, 19, 265, 271, 9, 153, 203, 76, 21, 4, 178, 20, 196,
	159, 284, 260, 100, 244, 167, 136, 296, 187, 266, 31, 89, 73, 113, 83,
	270, 42, 248, 194, 85, 152, 202, 168, 231, 54, 232, 41, 44, 82, 157,
	288, 132, 299, 94, 74, 81, 175, 102, 70, 208, 128, 125, 245, 14, 142,
	254, 112, 140, 107, 223, 95, 93, 51, 59, 131, 110, 133, 126, 207, 47,
	238, 90, 211, 282, 290, 234, 134, 217, 55, 191, 297, 252, 30, 279, 198,
	262, 235, 276, 129, 280, 63, 40, 8, 278, 216, 80, 291, 61, 49, 138,
	162, 239, 199, 69, 205, 220, 264, 269, 180, 1, 155, 67, 13, 158, 225,
	10, 91, 52, 38, 237, 116, 106, 16, 219, 88, 28, 206, 272, 123, 214,
	120, 12, 36, 46, 71,
}

var hash4jAdded = []int{
	71, 46, 36, 12, 120, 214, 123, 272, 206, 28, 88, 219, 16, 106, 116,
	237, 38, 52, 91, 10, 225, 158, 13, 67, 155, 1, 180, 269, 264, 220,
	205, 69, 199, 239, 162, 138, 49, 61, 291, 80, 216, 278, 8, 40, 63,
	280, 129, 276, 235, 262,
}

// The digests of 2000 key hashes over the set of 300, after the removals
// and after the adds.
const (
	hash4jDigest300 = 0x92667c6f4153bac9
	hash4jDigest100 = 0xd477646cb6af5d72
	hash4jDigest150 = 0xa1f99e4eed60be94
)
