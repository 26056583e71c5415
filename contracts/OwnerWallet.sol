// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @title A minimal smart-contract wallet with one owner
/// @notice An account whose signatures are checked by ERC-1271: `isValidSignature(hash, sig)`
/// answers the magic value `0x1626ba7e` exactly when `sig` is the owner's ECDSA signature of
/// `hash` (for a personal-sign message, `hash` is its EIP-191 hash). Wallet sign-in uses it to
/// prove that a contract wallet, not only a key, can sign in. The hash is not bound to this
/// wallet's address, so one owner's signature is valid for every wallet it owns: acceptable where
/// the signed text names the account (EIP-4361 messages do). The owner can also move funds.
contract OwnerWallet is IERC1271 {
    address public immutable owner;

    error NotOwner(address caller);
    error CallFailed(bytes returnData);

    constructor(address owner_) {
        owner = owner_;
    }

    receive() external payable {}

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecoverCalldata(hash, signature);
        if (err == ECDSA.RecoverError.NoError && signer == owner) {
            return IERC1271.isValidSignature.selector;
        }
        return 0xffffffff;
    }

    /// @notice Calls `target` with `value` and `data` from this wallet; the owner only.
    function execute(address target, uint256 value, bytes calldata data)
        external
        returns (bytes memory result)
    {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        bool ok;
        (ok, result) = target.call{value: value}(data);
        if (!ok) revert CallFailed(result);
    }
}
