// Feeds in their published formats, as the specs and the e2e journeys write them (nothing here reaches the internet).

/** The head and three rows of abuse.ch's `csv_recent`, as published (comment block, header as a comment, quoted rows). */
export const URLHAUS_SAMPLE = `################################################################
# abuse.ch URLhaus Database Dump (CSV - recent URLs)           #
# Last updated: 2026-12-07 08:02:04 (UTC)                      #
#                                                              #
# Terms Of Use: https://urlhaus.abuse.ch/api/                  #
# For questions please contact urlhaus [at] abuse.ch           #
################################################################
#
# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter
"3303577","2026-12-07 08:02:04","http://117.206.201.4:40359/Mozi.m","online","2026-12-07 08:02:04","malware_download","32-bit,elf,mips,Mozi","https://urlhaus.abuse.ch/url/3303577/","geenensp"
"3303576","2026-12-07 07:55:01","https://files.evil-cdn.example/invoice.exe","offline","","malware_download","exe,AgentTesla","https://urlhaus.abuse.ch/url/3303576/","abuse_ch"
"3303575","2026-12-07 07:50:00","http://dropper.example/","online","2026-12-07 07:50:00","malware_download","","https://urlhaus.abuse.ch/url/3303575/","abuse_ch"
`;

export const PHISHTANK_SAMPLE = JSON.stringify([
  {
    phish_id: '8547021',
    url: 'https://secure-login.bank-verify.example/account/update.php?id=1',
    phish_detail_url: 'http://www.phishtank.com/phish_detail.php?phish_id=8547021',
    submission_time: '2026-12-07T06:12:09+00:00',
    verified: 'yes',
    verification_time: '2026-12-07T06:20:44+00:00',
    online: 'yes',
    details: [{ ip_address: '203.0.113.7', cidr_block: '203.0.113.0/24', announcing_network: '64500', rir: 'ripencc', country: 'NL' }],
    target: 'PayPal',
  },
  { phish_id: '8547022', url: 'https://unverified.example/x', verified: 'no', online: 'yes', target: 'Other' },
]);

export const OPENPHISH_SAMPLE = `https://steam-gift.example/claim
http://wallet-connect.example/seed?x=1

https://login.office365.example.net/
`;

export const HOSTS_SAMPLE = `# Title: a DNS blocker's list
# Last modified: 2026-12-07
127.0.0.1 localhost
::1 localhost
0.0.0.0 tracker.ads.example
0.0.0.0 banner.ads.example pixel.ads.example
malvertising.example
||popunder.example^
! an Adblock comment
`;
