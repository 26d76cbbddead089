"""Public keys the key pair tests import, with their fingerprints (as
``ssh-keygen -l -E md5`` prints them)."""

RSA = ('ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQClpmSEZVx/ufOg4jEuuLP61uPMEp'
       'gTwt+w2R2QTaEEQkAAgwKK0xjQ97g9mPGUCSAmf3fYFb9krah2E46iSAoo0OXbS/E7'
       'yPiQef+Bs6Gk7rx8tJ284LrNIkBF0woAVni3E9oF5WJBKJplAi5EX+mqm4RbVVOItO'
       'RZegfbeZltWw== test@nova')
RSA_FINGERPRINT = '19:5c:bd:d3:1c:82:7a:15:26:fd:b4:67:c9:cd:6c:24'

ED25519 = ('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGPW60BL0ppgNXeLJNCBLR7W/'
           'Mrp3KTBMKCZyo82nyRj root@vm')
ED25519_FINGERPRINT = 'd3:ce:87:f5:01:cd:e7:6f:fb:40:7c:f0:a1:91:d4:3d'

ECDSA = ('ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAy'
         'NTYAAABBBKkHeH/P98V/84WAsTKLgkSBsTmskEbXv3Gg5rVek3+v2vQdvyFAgIK3'
         '9rvuCr7gDpiw+FVZmWuoQpqWy3F4Uh8=')
ECDSA_FINGERPRINT = '1f:5f:c0:8a:b4:95:9f:68:d1:d4:f1:33:10:c0:74:19'
