// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {ERC20Votes} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Votes.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title The platform's governance token (AGV)
/// @notice Voting power for platform decisions: an ERC-20 (18 decimals) with ERC20Votes, so a
/// Governor contract (or an off-chain tally) can read checkpointed votes at any past block. As
/// with every ERC20Votes token, a holder's balance counts as votes only once delegated (to
/// themselves or to someone else). Transfers, balances and permits behave like any ERC-20, which
/// is all the wallet relies on. New supply is minted only by the owner.
contract AgoraGovernanceToken is ERC20, ERC20Permit, ERC20Votes, Ownable {
    constructor(address initialOwner)
        ERC20("Agora Governance", "AGV")
        ERC20Permit("Agora Governance")
        Ownable(initialOwner)
    {}

    /// @notice Creates `amount` new tokens for `to`; the owner only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    // Both ERC20 and ERC20Votes define the balance update; the votes bookkeeping must run too.
    function _update(address from, address to, uint256 value) internal override(ERC20, ERC20Votes) {
        super._update(from, to, value);
    }

    // Permits and delegation by signature share one nonce per account.
    function nonces(address owner) public view override(ERC20Permit, Nonces) returns (uint256) {
        return super.nonces(owner);
    }
}
