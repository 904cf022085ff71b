/**
 * Passwords refused by the policy's common-password rule: the head of the widely published
 * breach-frequency lists (lower-case). A password is also refused when its letters, stripped of
 * leading and trailing digits and symbols, are one of these.
 */
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  'password', 'passw0rd', 'p@ssw0rd', 'p@ssword', 'password1', 'password123', 'passwordpassword', '123456', '1234567', '12345678',
  '123456789', '1234567890', '12345678910', '111111', '000000', '123123', '654321', '666666', '121212', '987654321',
  'qwerty', 'qwertyuiop', 'qwerty123', 'asdfgh', 'asdfghjkl', 'zxcvbnm', '1q2w3e4r', '1qaz2wsx', 'qazwsx', 'abc123',
  'abcdef', 'abcd', 'iloveyou', 'admin', 'administrator', 'welcome', 'welcome1', 'letmein', 'monkey', 'dragon',
  'football', 'baseball', 'soccer', 'hockey', 'master', 'sunshine', 'princess', 'shadow', 'superman', 'batman',
  'trustno1', 'starwars', 'whatever', 'freedom', 'hello', 'charlie', 'donald', 'michael', 'jennifer', 'jordan',
  'hunter', 'ranger', 'buster', 'thomas', 'robert', 'tigger', 'summer', 'winter', 'spring', 'autumn',
  'secret', 'changeme', 'default', 'login', 'access', 'flower', 'cheese', 'computer', 'internet', 'google',
  'mustang', 'harley', 'killer', 'pepper', 'ginger', 'cookie', 'chocolate', 'orange', 'banana', 'purple',
  'loveme', 'lovely', 'angel', 'passpass', 'test', 'testtest', 'guest', 'root', 'toor', 'letmein!',
  'correcthorsebatterystaple', 'qwertyqwerty', 'aaaaaa', 'zaq12wsx', 'mypassword', 'newpassword', 'password!', 'floe', 'lakehouse', 'iceberg',
]);
